package controller

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// TestShardsNeverShare runs two managers sharded by Flux's label convention
// and a MySQL in each shard plus one in neither: each manager writes only
// for its own shard's MySQL, and the MySQL in no shard is left alone.
func TestShardsNeverShare(t *testing.T) {
	ns := env.NewNamespace(t)
	shards := map[string]string{"alpha": "a", "bravo": "b"}
	writes := map[string]*ctrltest.WriteCounter{}
	for name, key := range shards {
		sel, err := labels.Parse(vocabulary.LabelShard + "=" + key)
		if err != nil {
			t.Fatal(err)
		}
		writes[name] = startManager(t, sel)
	}
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		m := ctrltest.NewMySQL(ns, name, 1)
		if key, ok := shards[name]; ok {
			m.Labels[vocabulary.LabelShard] = key
		}
		env.Create(t, m)
	}
	for name, key := range shards {
		ctrltest.Eventually(t, name+"'s StatefulSet, labelled with its shard", func(ctx context.Context) (bool, error) {
			sts := &appsv1.StatefulSet{}
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sts)
			return err == nil && sts.Labels[vocabulary.LabelShard] == key, client.IgnoreNotFound(err)
		})
		ctrltest.Eventually(t, name+"'s status written", func(ctx context.Context) (bool, error) {
			m := &databasev1.MySQL{}
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m)
			return err == nil && m.Status.ObservedGeneration == m.Generation, err
		})
	}
	for name, w := range writes {
		mine := 0
		for _, req := range w.Snapshot() {
			if !strings.Contains(req, "/namespaces/"+ns+"/") {
				continue
			}
			for _, other := range []string{"alpha", "bravo", "charlie"} {
				if other != name && strings.Contains(req, "/"+other) {
					t.Errorf("the manager of %s's shard wrote for %s: %s", name, other, req)
				}
			}
			if strings.Contains(req, "/"+name) {
				mine++
			}
		}
		if mine == 0 {
			t.Errorf("the manager of %s's shard sent no write for it", name)
		}
	}
	charlie := &databasev1.MySQL{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "charlie"}, charlie); err != nil {
		t.Fatal(err)
	}
	if charlie.Status.ObservedGeneration != -1 {
		t.Errorf("the MySQL in no shard was reconciled: observedGeneration %d", charlie.Status.ObservedGeneration)
	}
}

// TestLeaderElectionID gives each shard its own Lease and the unsharded
// manager the name it always had.
func TestLeaderElectionID(t *testing.T) {
	a, b := labels.SelectorFromSet(labels.Set{vocabulary.LabelShard: "a"}), labels.SelectorFromSet(labels.Set{vocabulary.LabelShard: "b"})
	if got := LeaderElectionID(labels.Everything()); got != "mysql-operator.database.example.com" {
		t.Errorf("unsharded: %s", got)
	}
	if LeaderElectionID(a) == LeaderElectionID(b) || LeaderElectionID(a) == LeaderElectionID(labels.Everything()) {
		t.Errorf("shards share a Lease: %s, %s", LeaderElectionID(a), LeaderElectionID(b))
	}
}
