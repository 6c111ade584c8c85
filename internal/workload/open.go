package workload

import (
	"crypto/tls"
	"database/sql"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Open returns a pool logged in as user to port 3306 of ip (a Service's
// ClusterIP or a pod's address), as an application's would be: a 2 s dial
// timeout, placeholders filled in by the driver (SHOW and DDL statements
// cannot be prepared by the server), connections renewed every 10 s so
// that a Service's new endpoint is reached. It does not connect.
func Open(ip, user, password string) (*sql.DB, error) { return OpenTLS(ip, user, password, nil) }

// OpenTLS is Open over TLS with tlsConfig; nil: in clear.
func OpenTLS(ip, user, password string, tlsConfig *tls.Config) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.TLS = user, password, "tcp", ip+":3306", tlsConfig
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 2*time.Second, 10*time.Second, 10*time.Second
	cfg.InterpolateParams = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetConnMaxLifetime(10 * time.Second)
	return db, nil
}
