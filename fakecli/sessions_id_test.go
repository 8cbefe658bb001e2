package fakecli

import (
	"regexp"
	"strings"
	"testing"
)

// TestSessionIDChecks holds the hand-written id checks to the patterns
// they replace.
func TestSessionIDChecks(t *testing.T) {
	safe := regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}$`)
	uuid := regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	ids := []string{"", "a", "abc-DEF_1.2", "a/b", "a b", "é", ".hidden", strings.Repeat("x", 200), strings.Repeat("x", 201),
		"7e483c9e-da5b-40b8-8eaa-ea1cd588c30f", "7E483C9E-DA5B-40B8-8EAA-EA1CD588C30F", "7e483c9e-da5b-40b8-8eaa-ea1cd588c30", "7e483c9eda5b-40b8-8eaa-ea1cd588c30f-",
		"7e483c9e-da5b-40b8-8eaa-ea1cd588c30g", "7e483c9e_da5b-40b8-8eaa-ea1cd588c30f", "7e483c9e-da5b-40b8-8eaa-ea1cd588c30f\n"}
	for _, id := range ids {
		if got, want := safeID(id), safe.MatchString(id); got != want {
			t.Errorf("safeID(%q) = %v, want %v", id, got, want)
		}
		if got, want := isUUID(id), uuid.MatchString(id); got != want {
			t.Errorf("isUUID(%q) = %v, want %v", id, got, want)
		}
	}
}
