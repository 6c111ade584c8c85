package agent

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/example/mysql-operator/login"
)

// Login becomes the image's command-line client (mariadb, or mysql)
// logged in to the server's socket as user, with args. The password is
// the first line of standard input, read with echo off when that is a
// terminal; the client reads it from an option file on a pipe
// (--defaults-extra-file=/dev/fd/N). So it is never on a command line, in
// the environment or in a file, and the client keeps no history.
func Login(c Config, user string, args []string) error {
	client, err := lookPath("mariadb", "mysql")
	if err != nil {
		return fmt.Errorf("the image has no client: %w", err)
	}
	password, err := readPassword(os.Stdin, os.Stdout)
	if err != nil {
		return fmt.Errorf("read the password: %w", err)
	}
	opts, err := login.ClientOptions(user, password, "socket="+c.Socket)
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	if _, err := w.WriteString(opts); err != nil { // far below a pipe's buffer
		return err
	}
	_ = w.Close()
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETFD, 0); err != nil { // kept across exec
		return fmt.Errorf("pass the option file: %w", err)
	}
	argv := append([]string{client, "--defaults-extra-file=/dev/fd/" + strconv.Itoa(int(r.Fd()))}, args...)
	return syscall.Exec(client, argv, append(os.Environ(), "MYSQL_HISTFILE=/dev/null"))
}

// readPassword writes login.Ready to out and reads one line from in, a
// byte at a time so that nothing after it, which is the client's, is
// consumed; with echo off while in is a terminal.
func readPassword(in *os.File, out io.Writer) (string, error) {
	fd := int(in.Fd())
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		quiet := *t
		quiet.Lflag &^= unix.ECHO
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
			return "", err
		}
		defer func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, t) }()
	}
	if _, err := io.WriteString(out, login.Ready); err != nil {
		return "", err
	}
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := in.Read(b)
		if n == 1 && (b[0] == '\n' || b[0] == '\r') {
			return string(line), nil
		}
		if n == 1 {
			line = append(line, b[0])
		}
		if err != nil {
			return "", err
		}
	}
}
