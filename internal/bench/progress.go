package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/mysql"
	"github.com/example/mysql-operator/internal/cluster"
	"github.com/example/mysql-operator/internal/testenv"
)

// progress counts, from an informer cache of the benchmark's namespace,
// the MySQLs that converged and the StatefulSets that are current. The
// waits poll it several times a second: listing N objects from the API
// server each time would load the API server, and the benchmark, with
// work that is not the operator's (at N=2000, a quarter of a core of the
// two during the converge it measures). A watch per kind costs what one
// more controller costs. Each object is judged again only when its
// resourceVersion moved.
type progress struct {
	reader client.Reader
	// direct reads the API server itself, to learn what the cache must
	// have caught up with before its figures count.
	direct client.Reader
	judged map[types.UID]judgement
	// since is the generation each MySQL had when the running wait
	// began: an older copy in the cache is not yet judged.
	since map[types.UID]int64
	// cpu reads the CPU time of the cluster's processes, and lastCPU is
	// its reading at the last progress line: each line says who worked
	// in the half minute before it, so that a converge standing still
	// shows whether the control plane was busy or idle.
	cpu     func() cluster.CPU
	lastCPU cluster.CPU
	// backlog says what waits in the control plane's queues.
	backlog func() (string, error)
}

// judgement is what progress concluded of one object at one
// resourceVersion.
type judgement struct {
	resourceVersion string
	done            bool
}

// watchProgress starts the informers of MySQLs and StatefulSets of c until
// ctx ends, and waits for them to sync.
func watchProgress(ctx context.Context, c *cluster.Cluster) (*progress, error) {
	ca, err := cache.New(c.Config, cache.Options{Scheme: testenv.Scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	if err != nil {
		return nil, err
	}
	for _, o := range []client.Object{&databasev1.MySQL{}, &appsv1.StatefulSet{}} {
		if _, err := ca.GetInformer(ctx, o); err != nil {
			return nil, err
		}
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		return nil, errors.New("the benchmark's cache did not sync")
	}
	return &progress{reader: ca, direct: c.Client, judged: map[types.UID]judgement{}, cpu: c.CPU, backlog: c.Backlog}, nil
}

// judge returns done(o), remembered for o's resourceVersion.
func (p *progress) judge(o client.Object, done func() (bool, error)) (bool, error) {
	if j, ok := p.judged[o.GetUID()]; ok && j.resourceVersion == o.GetResourceVersion() {
		return j.done, nil
	}
	d, err := done()
	if err != nil {
		return false, err
	}
	p.judged[o.GetUID()] = judgement{resourceVersion: o.GetResourceVersion(), done: d}
	return d, nil
}

// count counts the objects of the namespace that are done, and all of them.
func (p *progress) count(ctx context.Context, list client.ObjectList, done func(client.Object) (bool, error)) (current, all int, err error) {
	if err := p.reader.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, err
	}
	err = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		all++
		ok, err := p.judge(obj, func() (bool, error) { return done(obj) })
		if ok {
			current++
		}
		return err
	})
	return current, all, err
}

// interval says what the control plane did since the last call: the CPU
// time each process used, and what waits in its queues now.
func (p *progress) interval() string {
	now := p.cpu()
	d := now.Since(p.lastCPU)
	p.lastCPU = now
	backlog, err := p.backlog()
	if err != nil {
		backlog = err.Error()
	}
	return fmt.Sprintf("CPU %s; %s", d, backlog)
}

// statefulSets counts the StatefulSets that are Current with their pods
// ready, and all of them.
func (p *progress) statefulSets(ctx context.Context) (current, all int, err error) {
	return p.count(ctx, &appsv1.StatefulSetList{}, func(o client.Object) (bool, error) {
		r, err := mysql.StatefulSetStatus(testenv.Scheme, o.(*appsv1.StatefulSet))
		return err == nil && r.Status == status.CurrentStatus, nil
	})
}

// mysqls counts the MySQLs that converged.
func (p *progress) mysqls(ctx context.Context) (int, error) {
	current, _, err := p.count(ctx, &databasev1.MySQLList{}, func(o client.Object) (bool, error) {
		if o.GetGeneration() < p.since[o.GetUID()] {
			return false, nil
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return false, err
		}
		return converged(&unstructured.Unstructured{Object: u}), nil
	})
	return current, err
}

// waitStatefulSets polls until n StatefulSets are current, logging every
// half minute how many are.
func (p *progress) waitStatefulSets(ctx context.Context, n int, timeout time.Duration, log func(string, ...any)) error {
	due := ticker()
	p.lastCPU = p.cpu()
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		current, all, err := p.statefulSets(ctx)
		if err != nil {
			return false, err
		}
		if due() {
			log("floor: %d of %d StatefulSets made, %d current; %s", all, n, current, p.interval())
		}
		return current == n, nil
	})
}

// waitMySQLs polls until n MySQLs have converged, logging every half
// minute how many have, and how many of their StatefulSets are Current:
// the difference is what waits on the manager rather than on the control
// plane.
func (p *progress) waitMySQLs(ctx context.Context, n int, timeout time.Duration, log func(string, ...any)) error {
	if err := p.catchUp(ctx); err != nil {
		return err
	}
	due := ticker()
	p.lastCPU = p.cpu()
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		current, err := p.mysqls(ctx)
		if err != nil {
			return false, err
		}
		if due() {
			sts, all, err := p.statefulSets(ctx)
			if err != nil {
				return false, err
			}
			log("%d of %d MySQLs converged; StatefulSets %d made, %d current; %s", current, n, all, sts, p.interval())
		}
		return current == n, nil
	})
}

// catchUp records the generation of every MySQL as the API server has it
// now, so that a wait that begins right after a change does not count the
// cache's copies from before it as converged.
func (p *progress) catchUp(ctx context.Context) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(databasev1.GroupVersion.WithKind("MySQLList"))
	if err := p.direct.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list MySQLs: %w", err)
	}
	p.since = make(map[types.UID]int64, len(list.Items))
	for _, m := range list.Items {
		p.since[m.UID] = m.Generation
		delete(p.judged, m.UID)
	}
	return nil
}
