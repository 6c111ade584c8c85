// Package golden compares what a test rendered with a file under
// testdata/, or rewrites the file when the test runs with -update.
package golden

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that imports this package.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Updating says whether the tests rewrite the golden files (-update).
func Updating() bool { return *update }

// Check compares got with the file path, or rewrites it with -update; how
// names the command that does (such as "go test ./dbop -run Golden").
func Check(t testing.TB, path, got, how string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s -update)", err, how)
	}
	if string(want) != got {
		t.Errorf("%s differs from what was rendered (run %s -update and review the diff):\n%s", path, how, firstDiff(string(want), got))
	}
}

// firstDiff shows the first differing line.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  golden: %s\n  now:    %s", i+1, x, y)
		}
	}
	return ""
}
