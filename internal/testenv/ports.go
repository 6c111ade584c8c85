package testenv

import (
	"errors"
	"net"
	"sync"
)

// handedOut are the ports FreePort returned, never returned again.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePort returns a TCP port free on 127.0.0.1 and never returned before
// by this process. The kernel may give the same port to two listeners
// opened and closed one after the other; two components given it would
// collide, and a health check of the one that failed to listen would be
// answered by the other (a local cluster's scheduler did so once).
func FreePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, errors.New("no free port that was not handed out before")
}
