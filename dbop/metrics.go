package dbop

import (
	"context"
	"net"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// RoundTrips is mysql_operator_sql_round_trips_total: the packets the
// operator wrote to database servers. The client waits for an answer to
// each (a query, a ping, a step of a login), so each is one round trip: a
// DBA reads from it what the operator costs the servers, idle or not.
var RoundTrips = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "mysql_operator_sql_round_trips_total",
	Help: "Packets the operator wrote to database servers, each a round trip (a query, a ping, a step of a login).",
})

// Connections is mysql_operator_sql_connections: the connections the
// operator holds open to database servers. An instance keeps at most
// Options.MaxOpen and closes those unused for Options.IdleTimeout (closing
// one writes a packet too), so an idle cluster settles at one per server.
var Connections = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "mysql_operator_sql_connections",
	Help: "Connections the operator holds open to database servers.",
})

func init() {
	ctrlmetrics.Registry.MustRegister(RoundTrips, Connections)
}

// CountingDialer returns a dialer whose connections add one to c for every
// packet they write, and count themselves in open while open (open may be
// nil). The driver writes each packet in one call, so the count is the
// round trips, a connection's login included.
func CountingDialer(c prometheus.Counter, open prometheus.Gauge) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if open != nil {
			open.Inc()
		}
		return &countingConn{Conn: conn, c: c, open: open}, nil
	}
}

// countingConn counts its writes, and itself while open.
type countingConn struct {
	net.Conn
	c      prometheus.Counter
	open   prometheus.Gauge
	closed sync.Once
}

// Write counts one packet and writes it.
func (c *countingConn) Write(b []byte) (int, error) {
	c.c.Inc()
	return c.Conn.Write(b)
}

// Close closes the connection; it is no longer counted open.
func (c *countingConn) Close() error {
	c.closed.Do(func() {
		if c.open != nil {
			c.open.Dec()
		}
	})
	return c.Conn.Close()
}
