package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// stopGrace is how long a process has to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// process is a running component in a process group of its own; done
// closes when it exits.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// launch starts binary in a process group of its own, logging to logPath;
// the process dies with the test binary.
func launch(logPath, binary string, args ...string) (*process, error) {
	return launchEnv(logPath, nil, binary, args...)
}

// launchEnv is launch with env added to the test binary's environment.
func launchEnv(logPath string, env []string, binary string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logFile.Close(); close(p.done) }()
	return p, nil
}

// signal sends sig to the process's whole group.
func (p *process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// stop sends sig to the process group and waits for the process to exit;
// after stopGrace it kills the group with SIGKILL.
func (p *process) stop(sig syscall.Signal) {
	p.signal(sig)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		p.signal(syscall.SIGKILL)
		<-p.done
	}
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitHTTP polls url until it answers 200, or the process p exits. cfg
// gives the TLS and credentials of the request; nil means none, skipping
// certificate checks.
func waitHTTP(ctx context.Context, p *process, url string, cfg *rest.Config) error {
	if cfg == nil {
		cfg = &rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	httpClient.Timeout = 2 * time.Second
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if p != nil && p.exited() {
			return false, fmt.Errorf("exited: %s", p.cmd.ProcessState)
		}
		ok, err := answers200(httpClient, url)
		last = err
		return ok, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return err
}

// answers200 says whether url answers 200; the error says what it answered instead.
func answers200(c *http.Client, url string) (bool, error) {
	resp, err := c.Get(url)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return true, nil
}
