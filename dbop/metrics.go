package dbop

import (
	"context"
	"net"

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

func init() {
	ctrlmetrics.Registry.MustRegister(RoundTrips)
}

// CountingDialer returns a dialer whose connections add one to c for every
// packet they write. The driver writes each packet in one call, so the
// count is the round trips, a connection's login included.
func CountingDialer(c prometheus.Counter) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn, c: c}, nil
	}
}

// countingConn counts its writes.
type countingConn struct {
	net.Conn
	c prometheus.Counter
}

// Write counts one packet and writes it.
func (c *countingConn) Write(b []byte) (int, error) {
	c.c.Inc()
	return c.Conn.Write(b)
}
