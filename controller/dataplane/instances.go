package dataplane

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/dbop"
	"github.com/example/mysql-operator/topology"
)

// statusTimeout bounds the status query of one instance in a check;
// notReadyTimeout that of an instance whose pod the kubelet marks not
// ready. A server answers in milliseconds: one that has not in a second,
// when the kubelet could not reach it either, is being lost, and each check
// of it while the failover grace runs costs no more than that.
const (
	statusTimeout   = 2 * time.Second
	notReadyTimeout = time.Second
)

// instances is what one check saw of a MySQL's database servers.
type instances struct {
	// pods are the pods by index; nil where a pod is missing.
	pods []*corev1.Pod
	// tlsSecret is the data of the servers' certificate Secret, nil while
	// TLS is disabled.
	tlsSecret map[string][]byte
	// db are the connections by index; nil where the pod has no address.
	db []*dbop.Instance
	// observed is the input of topology.Decide; status what the servers said.
	observed []topology.Instance
	status   []*dbop.Status
	// errs are why an instance could not be observed, by index.
	errs []error
}

// observeInstances reads the status of every server whose pod has an
// address, in parallel, one round trip each,
// as the operator's admin account. The operator connects to pod addresses,
// which it reaches in a cluster and from the local cluster's host alike,
// over TLS verified against the CA of tlsSecret (when TLS is on) for the
// pod's name.
func (d *DataPlane) observeInstances(ctx context.Context, m *databasev1.MySQL, pods []corev1.Pod, cred dbop.Credentials, tlsSecret map[string][]byte) *instances {
	n := children.InstanceCount(m)
	in := &instances{pods: make([]*corev1.Pod, n), db: make([]*dbop.Instance, n), observed: make([]topology.Instance, n),
		status: make([]*dbop.Status, n), errs: make([]error, n), tlsSecret: tlsSecret}
	for i := range pods {
		if idx := children.PodIndex(m, pods[i].Name); idx >= 0 && idx < n {
			in.pods[idx] = &pods[i]
		}
	}
	addrs := make([]string, 0, n)
	var wg sync.WaitGroup
	for i := range n {
		in.observed[i] = topology.Instance{Index: i, Port: children.MySQLPort}
		pod := in.pods[i]
		if pod == nil || pod.DeletionTimestamp != nil {
			continue
		}
		in.observed[i].PodExists, in.observed[i].PodReady = true, children.PodReady(pod)
		if pod.Status.PodIP == "" || !children.ServerStarted(pod) {
			in.errs[i] = fmt.Errorf("pod %s: server not started", pod.Name)
			continue
		}
		// Replicas reach their source by its pod's DNS name where it has
		// one (ReplicationHost), which its certificate holds; the operator
		// dials the pod's address (it may run outside the cluster's DNS)
		// and verifies that same name.
		in.observed[i].Host, _ = children.ReplicationHost(m, pod)
		addr := pod.Status.PodIP + ":" + strconv.Itoa(children.MySQLPort)
		addrs = append(addrs, addr)
		db, err := d.pool.Get(addr, children.WithTLS(m, cred, tlsSecret[certs.CAKey], pod))
		if err != nil {
			in.errs[i] = err
			continue
		}
		in.db[i] = db
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.observe(ctx, i)
		}()
	}
	wg.Wait()
	d.pool.Keep(client.ObjectKeyFromObject(m).String(), addrs)
	d.renewStaleSessions(in)
	return in
}

// renewStaleSessions has the pool open new sessions to every server whose
// sessions see another certificate than the servers' Secret holds. A TLS
// session keeps the certificate the server presented when it began, so a
// server that loaded a renewed certificate shows it to new sessions only;
// until it has loaded it, each check opens new ones.
func (d *DataPlane) renewStaleSessions(in *instances) {
	leaf, err := certs.Leaf(in.tlsSecret[certs.CertKey])
	if err != nil {
		return // TLS disabled, or its Secret not made yet
	}
	for i, st := range in.status {
		if st != nil && !st.CertificateNotAfter.IsZero() && !st.CertificateNotAfter.Equal(leaf.NotAfter) {
			d.pool.Renew(in.db[i].Addr())
		}
	}
}

// allServeTLS says every instance's pod has the servers' certificate:
// replication then goes over TLS. While TLS is being turned on (the pods
// restart one by one with their certificate) a replica and its source may
// not both have it, and replication stays in clear. A missing pod (being
// made again, or not made yet) does not decide: it will be made with the
// certificate if the others have it.
func (in *instances) allServeTLS() bool {
	some := false
	for _, p := range in.pods {
		switch {
		case p == nil:
		case !children.ServesTLS(p):
			return false
		default:
			some = true
		}
	}
	return some
}

// observe reads the status of instance i into in.
func (in *instances) observe(ctx context.Context, i int) {
	timeout := statusTimeout
	if !in.observed[i].PodReady {
		timeout = notReadyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := in.db[i].Status(ctx)
	if err != nil {
		in.errs[i] = err
		return
	}
	o, err := st.Instance(i, in.observed[i].Host, in.observed[i].Port)
	if err != nil {
		in.errs[i] = err
		return
	}
	o.PodExists, o.PodReady = in.observed[i].PodExists, in.observed[i].PodReady
	in.observed[i], in.status[i] = o, st
}
