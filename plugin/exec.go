package plugin

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/login"
)

// execLogin runs command in the server's container of pod, as `kubectl
// exec -i` does (with a terminal when in is one): once the agent says
// login.Ready on its output, the password goes first on its input,
// then what in holds. The mark is taken out of what is shown.
func (o *options) execLogin(ctx context.Context, ns, pod string, command []string, password string, in io.Reader) error {
	f, isFile := in.(*os.File)
	tty := isFile && term.IsTerminal(int(f.Fd()))
	exec, err := o.executor(ns, pod, command, tty)
	if err != nil {
		return err
	}
	out := &markWriter{w: o.streams.Out, mark: []byte(login.Ready), seen: make(chan struct{})}
	stdin := &afterMark{seen: out.seen, first: []byte(password + "\n"), rest: in}
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: out, Tty: tty}
	if tty {
		state, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return err
		}
		defer func() { _ = term.Restore(int(f.Fd()), state) }()
		if w, h, err := term.GetSize(int(f.Fd())); err == nil {
			opts.TerminalSizeQueue = &oneSize{size: &remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}}
		}
	} else {
		opts.Stderr = o.streams.ErrOut
	}
	return exec.StreamWithContext(ctx, opts)
}

// executor is the exec of command in pod's server container, over
// WebSocket, or SPDY where the API server does not upgrade to it.
func (o *options) executor(ns, pod string, command []string, tty bool) (remotecommand.Executor, error) {
	cs, err := kubernetes.NewForConfig(o.rest)
	if err != nil {
		return nil, err
	}
	url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: children.ServerContainerName, Command: command,
			Stdin: true, Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(o.rest, "GET", url.String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(o.rest, "POST", url)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// markWriter passes what is written to w, less the first mark, and
// closes seen once the mark has gone by. Until then it holds back what
// may be the mark's beginning.
type markWriter struct {
	w    io.Writer
	mark []byte
	seen chan struct{}
	held []byte
	done bool
}

// Write implements io.Writer.
func (m *markWriter) Write(p []byte) (int, error) {
	if m.done {
		return m.w.Write(p)
	}
	m.held = append(m.held, p...)
	if i := bytes.Index(m.held, m.mark); i >= 0 {
		rest := append(m.held[:i:i], m.held[i+len(m.mark):]...)
		m.held, m.done = nil, true
		close(m.seen)
		_, err := m.w.Write(rest)
		return len(p), err
	}
	// Keep what could start the mark; pass the rest (an error of the agent's).
	keep := min(len(m.held), len(m.mark)-1)
	if _, err := m.w.Write(m.held[:len(m.held)-keep]); err != nil {
		return 0, err
	}
	m.held = append([]byte(nil), m.held[len(m.held)-keep:]...)
	return len(p), nil
}

// afterMark reads nothing until seen is closed, then first, then rest.
type afterMark struct {
	seen  <-chan struct{}
	first []byte
	rest  io.Reader
}

// Read implements io.Reader.
func (a *afterMark) Read(p []byte) (int, error) {
	<-a.seen
	if len(a.first) > 0 {
		n := copy(p, a.first)
		a.first = a.first[n:]
		return n, nil
	}
	return a.rest.Read(p)
}

// oneSize is a terminal size queue that gives the size once (a window
// resized later is not followed).
type oneSize struct {
	once sync.Once
	size *remotecommand.TerminalSize
}

// Next implements remotecommand.TerminalSizeQueue: nil once the size was
// given, which ends the monitoring.
func (q *oneSize) Next() *remotecommand.TerminalSize {
	var s *remotecommand.TerminalSize
	q.once.Do(func() { s = q.size })
	return s
}
