package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentconform/agentconform/fixtures/convert"
	"github.com/agentconform/agentconform/transcript"
)

// updateVersionedFixtures writes the captures of each CLI version as
// that version's fixture set (package fixtures, "Versioned fixtures"):
// converted for replay by package fixtures/convert (as the generator
// converts the captures in testdata/captures: Claude's joined into the
// default set's scenarios), one file per fixture scenario in
// dir/<cli>/<version>/, over what an earlier capture of the same scenario
// wrote there. Failed captures are left out, and captures no fixture is
// made from are named.
func updateVersionedFixtures(dir string, runs []*captureRun, progress io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--update-fixtures: %s is not a fixtures directory (run from an agentconform checkout or pass --fixtures-dir)", dir)
	}
	type key struct{ cli, version string }
	var order []key
	sets := map[key][]*transcript.Transcript{}
	for _, r := range runs {
		if r.File == "" || r.Error != "" || r.failed() {
			continue
		}
		t, err := transcript.ReadFile(r.File, transcript.Options{})
		if err != nil {
			return fmt.Errorf("--update-fixtures: %w", err)
		}
		k := key{t.Header.CLI, t.Header.CLIVersion}
		if _, ok := sets[k]; !ok {
			order = append(order, k)
		}
		sets[k] = append(sets[k], t)
	}
	for _, k := range order {
		res, err := convert.Set(sets[k])
		if err != nil {
			return fmt.Errorf("--update-fixtures: %w", err)
		}
		files, err := convert.WriteSet(dir, res.Fixtures)
		if err != nil {
			return fmt.Errorf("--update-fixtures: %w", err)
		}
		fmt.Fprintf(progress, "wrote the %s %s fixtures: %s (%d scenarios)\n", k.cli, k.version, filepath.Join(dir, k.cli, k.version), len(files))
		for _, u := range res.Unused {
			fmt.Fprintf(progress, "  no fixture from the %s %s capture %s\n", k.cli, k.version, u)
		}
	}
	return nil
}
