package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// The server container's process is `agent run-server`, which runs the
// server as its child rather than becoming it. When the agent crashes the
// server on purpose (Crash: a fence, or the operator discarding
// unacknowledged transactions), it starts it again at once, in place: a
// crash the kubelet restarts counts in its back-off, which doubles up to
// five minutes, so a primary fenced twice in a few minutes would sit out
// minutes as a missing replica. Every other end of the server (a crash of
// its own, the OOM killer, a failed start) ends the container with the
// server's status, for the kubelet to restart and report as before
// (the last log lines in the termination message).

// inPlaceMax and inPlaceWindow bound the restarts in place: at most
// inPlaceMax within inPlaceWindow; past that, the container ends and the
// kubelet's back-off applies, as to any crash loop.
const (
	inPlaceMax    = 5
	inPlaceWindow = 10 * time.Minute
)

// forwarded are the signals the supervisor passes on to the server; the
// first three also stop it for good (the kubelet stopping the container).
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

// ExitError is the server's end that ends the container: Code is the
// container's exit status (128 plus the signal for a server killed).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("the server ended with status %d", e.Code) }

// RunServer runs the server, argv[0] found on PATH, with the options of
// its crash recovery (RecoveryArgs), after swapping in a prepared seed
// (the old data directory of an instance being seeded holds nothing worth
// keeping: the operator seeds empty instances only), and runs it again in
// place after a crash the agent asked for, or a clean shutdown (the
// operator's, to swap a seed in). It returns when the server ends for
// good: an *ExitError, or why it could not start.
func RunServer(c Config, argv []string) error {
	if len(argv) == 0 {
		return errors.New("no server command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	return supervise(c, path, append(argv, RecoveryArgs(path)...), sigs)
}

// supervise runs path with argv (argv[0] its name, as the server's own
// messages give it) until it ends for good, passing on sigs.
func supervise(c Config, path string, argv []string, sigs <-chan os.Signal) error {
	var restarts []time.Time
	for {
		if err := (&seeder{c: c}).swapIn(); err != nil {
			return err
		}
		if err := os.Remove(c.crashMarker()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		ws, stopping, err := runOnce(path, argv, sigs)
		if err != nil {
			return err
		}
		_, statErr := os.Stat(c.crashMarker())
		now := time.Now()
		restarts = recent(restarts, now)
		if !restartInPlace(ws, stopping, statErr == nil, len(restarts)) {
			return &ExitError{Code: exitCode(ws)}
		}
		restarts = append(restarts, now)
		fmt.Fprintf(os.Stderr, "agent run-server: the server ended (%s); starting it again in place\n", describe(ws))
	}
}

// runOnce starts the server and waits for its end, passing on sigs;
// stopping says a signal asked it to stop for good.
func runOnce(path string, argv []string, sigs <-chan os.Signal) (syscall.WaitStatus, bool, error) {
	cmd := &exec.Cmd{Path: path, Args: argv, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		return 0, false, fmt.Errorf("start %s: %w", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopping := false
	for {
		select {
		case s := <-sigs:
			stopping = stopping || s == syscall.SIGTERM || s == syscall.SIGINT || s == syscall.SIGQUIT
			_ = cmd.Process.Signal(s) // it may have just ended: Wait says
		case err := <-done:
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				return 0, stopping, fmt.Errorf("wait for %s: %w", path, err)
			}
			return cmd.ProcessState.Sys().(syscall.WaitStatus), stopping, nil
		}
	}
}

// restartInPlace says whether a server that ended with ws starts again in
// the same container: not when asked to stop; after a kill the agent
// asked for (requested), or a clean shutdown, while fewer than inPlaceMax
// restarts in place happened within inPlaceWindow.
func restartInPlace(ws syscall.WaitStatus, stopping, requested bool, recentRestarts int) bool {
	if stopping || recentRestarts >= inPlaceMax {
		return false
	}
	killedOnRequest := requested && ws.Signaled() && ws.Signal() == syscall.SIGKILL
	cleanExit := ws.Exited() && ws.ExitStatus() == 0
	return killedOnRequest || cleanExit
}

// recent drops the restarts older than inPlaceWindow before now.
func recent(restarts []time.Time, now time.Time) []time.Time {
	kept := restarts[:0]
	for _, t := range restarts {
		if now.Sub(t) < inPlaceWindow {
			kept = append(kept, t)
		}
	}
	return kept
}

// exitCode is the container's exit status for a server that ended with ws,
// as a shell reports it: 128 plus the signal that killed it.
func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// describe says how a server ended.
func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return fmt.Sprintf("killed by signal %d, %s", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// crashMarker is the file Crash writes before it kills the server, which
// tells the supervisor that the kill was asked for: on the run volume the
// pod's containers share, beside the pid file.
func (c Config) crashMarker() string { return c.PidFile + ".crash-requested" }
