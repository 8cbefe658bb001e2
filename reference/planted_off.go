//go:build !agentconform_planted

package reference

// plantedBug is false in every build but the judge's own test of its
// independence (planted_on.go).
const plantedBug = false
