//go:build !linux

package agent

import "errors"

// Login runs in a database pod, on Linux only (see login_linux.go).
func Login(Config, string, []string) error {
	return errors.New("agent login runs in a database pod, on Linux")
}
