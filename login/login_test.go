package login

import "testing"

// TestOptionValue quotes what an option file reads back, and refuses what
// it cannot.
func TestOptionValue(t *testing.T) {
	for v, want := range map[string]string{`pw`: `"pw"`, `a#b c`: `"a#b c"`, `it's`: `"it's"`, `say "hi"`: `'say "hi"'`, `a\b`: `"a\\b"`} {
		if got, err := OptionValue(v); err != nil || got != want {
			t.Errorf("OptionValue(%q) = %q, %v; want %q", v, got, err, want)
		}
	}
	for _, v := range []string{`"it's"`, "a\nb"} {
		if _, err := OptionValue(v); err == nil {
			t.Errorf("OptionValue(%q) accepted", v)
		}
	}
}
