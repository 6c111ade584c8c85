package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestartInPlace: which ends of the server start it again in place.
func TestRestartInPlace(t *testing.T) {
	killed := syscall.WaitStatus(syscall.SIGKILL)                    // signaled by SIGKILL
	terminated := syscall.WaitStatus(syscall.SIGTERM)                // signaled by SIGTERM
	clean, failed := syscall.WaitStatus(0), syscall.WaitStatus(1<<8) // exit 0, exit 1
	for _, tt := range []struct {
		name      string
		ws        syscall.WaitStatus
		stopping  bool
		requested bool
		recent    int
		want      bool
	}{
		{"killed on request", killed, false, true, 0, true},
		{"killed on request, budget left", killed, false, true, inPlaceMax - 1, true},
		{"killed on request, budget spent", killed, false, true, inPlaceMax, false},
		{"killed by someone else (the OOM killer)", killed, false, false, 0, false},
		{"clean shutdown (a seed to swap in)", clean, false, false, 0, true},
		{"clean shutdown, budget spent", clean, false, false, inPlaceMax, false},
		{"failed", failed, false, false, 0, false},
		{"failed while a crash was asked for", failed, false, true, 0, false},
		{"stopped by the kubelet", terminated, true, false, 0, false},
		{"stopping, then ended cleanly", clean, true, false, 0, false},
		{"stopping, killed on request", killed, true, true, 0, false},
	} {
		if got := restartInPlace(tt.ws, tt.stopping, tt.requested, tt.recent); got != tt.want {
			t.Errorf("%s: restart in place %t, want %t", tt.name, got, tt.want)
		}
	}
	if got := exitCode(killed); got != 137 {
		t.Errorf("exit code of a server killed by SIGKILL: %d, want 137", got)
	}
	if got := exitCode(failed); got != 1 {
		t.Errorf("exit code of a server that exited 1: %d", got)
	}
}

// fakeServer is a server for supervise: a shell that records each start
// and its pid, and then runs script.
type fakeServer struct {
	c      Config
	starts string
	sigs   chan os.Signal
	done   chan error
}

// superviseFake supervises a fake server running script after it wrote its
// pid file and recorded its start.
func superviseFake(t *testing.T, script string) *fakeServer {
	t.Helper()
	dir := t.TempDir()
	f := &fakeServer{c: Config{PidFile: filepath.Join(dir, "mysqld.pid"), DataDir: filepath.Join(dir, "data")},
		starts: filepath.Join(dir, "starts"), sigs: make(chan os.Signal, 1), done: make(chan error, 1)}
	// The server's own name, argv[0], is its messages' prefix: kept.
	sh := `echo $$ > "$1"; echo x >> "$2"; cd "$3"; tr '\0' '\n' < /proc/$$/cmdline | head -n 1 > argv0; ` + script
	go func() {
		f.done <- supervise(f.c, "/bin/sh", []string{"fake-server", "-c", sh, "sh", f.c.PidFile, f.starts, dir}, f.sigs)
	}()
	t.Cleanup(func() {
		select {
		case <-f.done:
		default:
			f.sigs <- syscall.SIGTERM
			<-f.done
		}
	})
	return f
}

// startCount is how many times the fake server started.
func (f *fakeServer) startCount() int {
	data, _ := os.ReadFile(f.starts) // none yet: 0
	return strings.Count(string(data), "x")
}

// pid is the fake server's pid file's pid, 0 when unreadable.
func (f *fakeServer) pid() int {
	data, _ := os.ReadFile(f.c.PidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// end waits for supervise to return and gives its exit code.
func (f *fakeServer) end(t *testing.T) int {
	t.Helper()
	select {
	case err := <-f.done:
		var exit *ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("supervise returned %v, want the server's end", err)
		}
		f.done <- err // for the cleanup
		return exit.Code
	case <-time.After(20 * time.Second):
		t.Fatal("supervise did not return")
		return 0
	}
}

// TestSupervise runs real processes under supervise: a crash the agent
// asked for (Crash) and a clean shutdown start the server again in place;
// a kill nobody asked for, a failure and the kubelet's SIGTERM end it with
// the server's status.
func TestSupervise(t *testing.T) {
	t.Run("crash asked for, then SIGTERM", func(t *testing.T) {
		f := superviseFake(t, "exec sleep 60")
		waitFor(t, "the first start", func() bool { return f.startCount() == 1 && f.pid() > 0 })
		first := f.pid()
		if err := f.c.Crash(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "a start in place", func() bool { return f.startCount() == 2 && f.pid() != first })
		if _, err := os.Stat(f.c.crashMarker()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the crash marker outlived the restart: %v", err)
		}
		f.sigs <- syscall.SIGTERM
		if code := f.end(t); code != 128+int(syscall.SIGTERM) {
			t.Errorf("stopped by SIGTERM: exit code %d", code)
		}
		if n := f.startCount(); n != 2 {
			t.Errorf("started %d times, want 2", n)
		}
	})
	t.Run("killed by someone else", func(t *testing.T) {
		f := superviseFake(t, "exec sleep 60")
		waitFor(t, "the first start", func() bool { return f.pid() > 0 })
		if err := syscall.Kill(f.pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if code := f.end(t); code != 137 {
			t.Errorf("killed: exit code %d, want 137", code)
		}
	})
	t.Run("clean shutdown starts again", func(t *testing.T) {
		f := superviseFake(t, `if [ -e once ]; then exec sleep 60; fi; touch once; exit 0`)
		waitFor(t, "a start in place after a clean end", func() bool { return f.startCount() == 2 })
		f.sigs <- syscall.SIGTERM
		if code := f.end(t); code != 143 {
			t.Errorf("stopped by SIGTERM: exit code %d", code)
		}
	})
	t.Run("failure ends it", func(t *testing.T) {
		f := superviseFake(t, "exit 3")
		if code := f.end(t); code != 3 {
			t.Errorf("failed: exit code %d, want 3", code)
		}
		if n := f.startCount(); n != 1 {
			t.Errorf("started %d times, want 1", n)
		}
		if name, err := os.ReadFile(filepath.Join(filepath.Dir(f.starts), "argv0")); err != nil || string(name) != "fake-server\n" {
			t.Errorf("the server ran as %q (%v), want its argv[0] fake-server", name, err)
		}
	})
}
