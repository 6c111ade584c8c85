package testenv

import "testing"

// TestFreePortNeverRepeats asks for many ports: the kernel hands a closed
// port out again readily, FreePort must not.
func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d returned twice", p)
		}
		seen[p] = true
	}
}
