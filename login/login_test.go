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

// TestClientOptions renders a [client] section.
func TestClientOptions(t *testing.T) {
	got, err := ClientOptions("root", `p#w`, "socket=/run/s.sock")
	if want := "[client]\nuser=\"root\"\npassword=\"p#w\"\nsocket=/run/s.sock\n"; err != nil || got != want {
		t.Errorf("ClientOptions = %q, %v; want %q", got, err, want)
	}
	if _, err := ClientOptions("root", "a\nb"); err == nil {
		t.Error("a password with a line break accepted")
	}
}
