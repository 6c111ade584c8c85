// Command coredns is CoreDNS with the plugins the local cluster's DNS
// needs: it answers for Services and pods of cluster.local from the API
// server, and nothing else (no upstream: the cluster has no other network).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives are the plugins, in the order CoreDNS runs them (a subset of
// the stock plugin.cfg order).
var directives = []string{"bind", "health", "ready", "errors", "cache", "kubernetes"}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
