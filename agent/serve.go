package agent

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/example/mysql-operator/dbop"
)

// Probes answers the kubelet's probes about the server of the pod,
// connecting over the unix socket as dbop.AgentUser.
type Probes struct {
	db *dbop.Instance
	// MaxLag is the most seconds a replica may be behind its source and be ready.
	MaxLag int64
}

// NewProbes opens the pod's server over its socket.
func NewProbes(c Config, maxLag int64) (*Probes, error) {
	pw, err := c.readSecret(AgentPasswordFile)
	if err != nil {
		return nil, err
	}
	o := dbop.DefaultOptions()
	o.MaxOpen, o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 1, 2*time.Second, 5*time.Second, 5*time.Second
	db, err := dbop.Open(c.Socket, dbop.Credentials{User: dbop.AgentUser, Password: pw}, o)
	if err != nil {
		return nil, err
	}
	return &Probes{db: db, MaxLag: maxLag}, nil
}

// routeProbes serves /healthz (the server answers) and /readyz (the
// server may take its role's traffic) to anyone: they say only ok or why
// not, no secret is ever in an answer.
func (p *Probes) routeProbes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		answer(w, p.alive(r.Context()))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		answer(w, p.ready(r.Context()))
	})
}

// routeAPI serves the seed, backup, archive, restore and crash endpoints,
// each to the bearer of the agent's password.
func routeAPI(mux *http.ServeMux, s *seeder, b *backupJobs, a *archiver) {
	b.handle(mux, s.authorized)
	mux.Handle("GET /backup", s.authorized(http.HandlerFunc(s.backup)))
	mux.Handle("GET /seed", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := s.status()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(marshal(st))
	})))
	mux.Handle("POST /seed", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req SeedRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || req.Donor == "" {
			http.Error(w, "want a JSON seed request with a donor", http.StatusBadRequest)
			return
		}
		answerWith(w, s.start(req), http.StatusConflict)
	})))
	mux.Handle("DELETE /seed", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answerWith(w, s.clear(), http.StatusConflict)
	})))
	mux.Handle("POST /crash", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answerWith(w, s.c.Crash(), http.StatusInternalServerError)
	})))
	mux.Handle("GET /archive", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(marshal(a.status()))
	})))
	mux.Handle("GET /restore", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, found, err := s.c.Restored()
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		case !found:
			http.Error(w, "no restore made this data directory", http.StatusNotFound)
		default:
			_, _ = w.Write(marshal(res))
		}
	})))
}

// authorized lets through requests bearing the agent's password.
func (s *seeder) authorized(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if s.token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// answerWith writes 200 ok, or code and the error.
func answerWith(w http.ResponseWriter, err error, code int) {
	if err != nil {
		http.Error(w, err.Error(), code)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// answer writes 200 ok, or 503 and the reason.
func answer(w http.ResponseWriter, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// alive says whether the server answers a status query.
func (p *Probes) alive(ctx context.Context) error {
	_, err := p.db.Status(ctx)
	return err
}

// ready says whether the server may take its role's traffic: a writable
// server is a primary and is ready; a read-only one is ready only as a
// replica whose replication threads run without error, less than MaxLag
// behind. A read-only server without a source waits for the operator.
func (p *Probes) ready(ctx context.Context) error {
	st, err := p.db.Status(ctx)
	if err != nil {
		return err
	}
	if !st.ReadOnly {
		return nil
	}
	return ReplicaHealth(st.Replica, p.MaxLag)
}

// ReplicaHealth says why a replication status is not healthy, nil when both
// threads run without error and the lag is at most maxLag seconds.
func ReplicaHealth(r *dbop.ReplicaStatus, maxLag int64) error {
	switch {
	case r == nil:
		return errors.New("read-only and not replicating: waiting for the operator")
	case r.LastIOErrno != 0:
		return fmt.Errorf("replication receiver error %d", r.LastIOErrno)
	case r.LastSQLErrno != 0:
		return fmt.Errorf("replication applier error %d", r.LastSQLErrno)
	case r.IOState != "Yes":
		return fmt.Errorf("replication receiver is %q", r.IOState)
	case !r.SQLRunning:
		return errors.New("replication applier is stopped")
	case r.SecondsBehind == nil:
		return errors.New("replication lag unknown")
	case *r.SecondsBehind > maxLag:
		return fmt.Errorf("replication lag %ds over %ds", *r.SecondsBehind, maxLag)
	}
	return nil
}

// Serve serves the probes on c.Listen, and the API: on c.TLSListen with
// mutual TLS when c.TLSDir is set, else beside the probes, until ctx
// ends. A seed interrupted by a restart of the agent is reported Failed.
func Serve(ctx context.Context, c Config, p *Probes) error {
	token, err := c.readSecret(AgentPasswordFile)
	if err != nil {
		return err
	}
	s := &seeder{c: c, token: token, client: &http.Client{Timeout: 0}}
	b := &backupJobs{c: c, ctx: ctx}
	a := &archiver{c: c, log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	if c.BackupDir != "" {
		go a.run(ctx)
	}
	if c.TLSDir != "" {
		go (&tlsReloader{c: c, log: a.log}).run(ctx)
	}
	if c.FenceAfter > 0 {
		go newFencer(c, p.db, a.log).run(ctx)
	}
	probes := http.NewServeMux()
	p.routeProbes(probes)
	probes.Handle("GET /metrics", metricsHandler(&collector{db: p.db, archive: a, backups: c.BackupDir != ""}))
	api := probes
	l, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return err
	}
	listeners := []net.Listener{l}
	if c.TLSDir != "" {
		api = http.NewServeMux()
		tl, err := tls.Listen("tcp", c.TLSListen, c.serverTLS())
		if err != nil {
			_ = l.Close()
			return err
		}
		listeners = append(listeners, tl)
	}
	routeAPI(api, s, b, a)
	return serveAll(ctx, listeners, []http.Handler{probes, api})
}

// serveAll serves each listener with its handler until ctx ends, and
// returns the first failure.
func serveAll(ctx context.Context, listeners []net.Listener, handlers []http.Handler) error {
	g, ctx := errgroup.WithContext(ctx)
	for i, l := range listeners {
		srv := &http.Server{Handler: handlers[i], ReadHeaderTimeout: 5 * time.Second}
		g.Go(func() error {
			if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
		g.Go(func() error {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(shutdown)
		})
	}
	return g.Wait()
}

// marshal is json.Marshal for the handlers' answers.
func marshal(v any) []byte {
	data, _ := json.Marshal(v) // the answers are plain structs
	return data
}
