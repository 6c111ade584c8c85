package dbop

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Credentials is the account the operator logs in with.
type Credentials struct {
	// User is the account name (normally AdminUser).
	User string
	// Password is the account's password.
	Password string
	// TLS is how the connection is encrypted; the zero value: in clear.
	TLS ServerTLS
}

// ServerTLS asks for TLS to a server whose certificate the CA signed for
// ServerName. A comparable value, so that a pool reopens an instance
// whose CA changed.
type ServerTLS struct {
	// CA is the PEM of the CAs to trust; empty: no TLS.
	CA string
	// ServerName is the name the server's certificate must hold.
	ServerName string
	// Required refuses a server that does not offer TLS; without it such a
	// server (one not yet restarted with its certificate) is spoken to in
	// clear, while a server that offers TLS is always verified.
	Required bool
}

// config returns the TLS config of t, nil for none.
func (t ServerTLS) config() (*tls.Config, error) {
	if t.CA == "" {
		return nil, nil
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(t.CA)) {
		return nil, fmt.Errorf("the CA of %s holds no PEM certificate", t.ServerName)
	}
	return &tls.Config{RootCAs: roots, ServerName: t.ServerName, MinVersion: tls.VersionTLS12}, nil
}

// Options bound the connections to one instance. The zero value of a field means
// the default of DefaultOptions.
type Options struct {
	// MaxOpen is the most connections open to one instance (default 2).
	MaxOpen int
	// IdleTimeout closes connections idle that long (default 30s).
	IdleTimeout time.Duration
	// DialTimeout bounds connecting (default 2s).
	DialTimeout time.Duration
	// ReadTimeout and WriteTimeout bound each network read and write (default
	// 30s). WaitForGTID waits in server-side slices shorter than ReadTimeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds each network write (default 30s).
	WriteTimeout time.Duration
	// Dial replaces the network dialer (default: one counting round trips
	// in RoundTrips and open connections in Connections).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultOptions returns the defaults: 2 connections, 30s idle timeout, 2s dial
// timeout (a server in the cluster's network answers in milliseconds; one that
// does not is lost, and the failover's clock runs), 30s read and write timeouts.
func DefaultOptions() Options {
	return Options{MaxOpen: 2, IdleTimeout: 30 * time.Second, DialTimeout: 2 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.MaxOpen <= 0 {
		o.MaxOpen = d.MaxOpen
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = d.IdleTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = d.DialTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = d.ReadTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = d.WriteTimeout
	}
	if o.Dial == nil {
		o.Dial = CountingDialer(RoundTrips, Connections)
	}
	return o
}

// Instance is the handle on one MySQL or MariaDB server: a small *sql.DB and the
// dialect detected once from VERSION(). It is safe for concurrent use.
type Instance struct {
	addr        string
	cred        Credentials
	db          *sql.DB
	readTimeout time.Duration

	mu      sync.Mutex
	dialect Dialect
	version Version
	// renew says the pool replaces the instance at its next Get.
	renew bool
}

// Open returns an Instance for addr ("host:port", or a unix socket path starting
// with "/"). It does not connect: the first operation does.
func Open(addr string, cred Credentials, o Options) (*Instance, error) {
	o = o.withDefaults()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = cred.User, cred.Password
	cfg.Net, cfg.Addr = "tcp", addr
	if strings.HasPrefix(addr, "/") {
		cfg.Net = "unix"
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = o.DialTimeout, o.ReadTimeout, o.WriteTimeout
	// Placeholders are interpolated by the driver (escaped for the session's
	// sql_mode): the server cannot prepare CHANGE MASTER, CREATE USER or GRANT,
	// and every statement then costs one round trip.
	cfg.InterpolateParams = true
	// Status reads everything in one COM_QUERY of several statements. No statement
	// is built from user text, so this does not widen injection.
	cfg.MultiStatements = true
	cfg.DialFunc = o.Dial
	tlsConfig, err := cred.TLS.config()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", addr, err)
	}
	cfg.TLS, cfg.AllowFallbackToPlaintext = tlsConfig, !cred.TLS.Required
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", addr, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(o.MaxOpen)
	db.SetMaxIdleConns(o.MaxOpen)
	db.SetConnMaxIdleTime(o.IdleTimeout)
	return &Instance{addr: addr, cred: cred, db: db, readTimeout: o.ReadTimeout}, nil
}

// Addr returns the instance's address.
func (i *Instance) Addr() string { return i.addr }

// Close closes the instance's connections.
func (i *Instance) Close() error { return i.db.Close() }

// Dialect returns the instance's dialect, detecting it from SELECT VERSION() on
// first use. A failed detection is retried on the next call.
func (i *Instance) Dialect(ctx context.Context) (Dialect, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.dialect != nil {
		return i.dialect, nil
	}
	var s string
	if err := i.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&s); err != nil {
		return nil, fmt.Errorf("detect version of %s: %w", i.addr, err)
	}
	v, err := ParseVersion(s)
	if err != nil {
		return nil, fmt.Errorf("detect version of %s: %w", i.addr, err)
	}
	d, err := DialectFor(v)
	if err != nil {
		return nil, fmt.Errorf("detect version of %s: %w", i.addr, err)
	}
	i.dialect, i.version = d, v
	return d, nil
}

// noteVersion re-selects the dialect when Status saw another version (the server
// was upgraded behind the same address).
func (i *Instance) noteVersion(v Version) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if v.Engine == i.version.Engine && v.Major == i.version.Major && v.Minor == i.version.Minor {
		return
	}
	if d, err := DialectFor(v); err == nil {
		i.dialect, i.version = d, v
	}
}

// Pool keeps one Instance per address, so that a reconciler that observes every
// instance each time reuses its connections. It also remembers which addresses
// each owner (a MySQL) uses, so that the connections of an address no longer
// used (a pod that got another address, a MySQL deleted or scaled in) are
// closed. It is safe for concurrent use.
type Pool struct {
	opts    Options
	mu      sync.Mutex
	entries map[string]*Instance
	owners  map[string][]string
}

// NewPool returns an empty pool whose instances use o.
func NewPool(o Options) *Pool {
	return &Pool{opts: o.withDefaults(), entries: map[string]*Instance{}, owners: map[string][]string{}}
}

// Keep records addrs as the addresses owner uses now and closes the
// instances of the addresses it used before and no longer does.
func (p *Pool) Keep(owner string, addrs []string) {
	p.mu.Lock()
	before := p.owners[owner]
	if len(addrs) == 0 {
		delete(p.owners, owner)
	} else {
		p.owners[owner] = addrs
	}
	p.mu.Unlock()
	for _, a := range before {
		if !slices.Contains(addrs, a) {
			_ = p.Forget(a)
		}
	}
}

// Release closes every instance owner uses, for an owner that is gone.
func (p *Pool) Release(owner string) { p.Keep(owner, nil) }

// Get returns the Instance for addr, opening it on first use. An instance opened
// with other credentials (a rotated password), or marked by Renew, is closed
// and replaced.
func (p *Pool) Get(addr string, cred Credentials) (*Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in, ok := p.entries[addr]; ok {
		if in.cred == cred && !in.renew {
			return in, nil
		}
		_ = in.Close()
		delete(p.entries, addr)
	}
	in, err := Open(addr, cred, p.opts)
	if err != nil {
		return nil, err
	}
	p.entries[addr] = in
	return in, nil
}

// Renew has the next Get of addr open new connections, and close the
// ones held now once it does: a TLS session keeps the certificate the
// server presented when it began, and the operator's sessions must see
// the one the server presents now. Those in use until then are not
// disturbed.
func (p *Pool) Renew(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in, ok := p.entries[addr]; ok {
		in.renew = true
	}
}

// Forget closes and drops the Instance for addr (the instance was deleted).
func (p *Pool) Forget(addr string) error {
	p.mu.Lock()
	in, ok := p.entries[addr]
	delete(p.entries, addr)
	p.mu.Unlock()
	if !ok {
		return nil
	}
	return in.Close()
}

// Len returns the number of instances held.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// Close closes every instance.
func (p *Pool) Close() error {
	p.mu.Lock()
	entries := p.entries
	p.entries = map[string]*Instance{}
	p.mu.Unlock()
	var first error
	for _, in := range entries {
		if err := in.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
