package mysql

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
)

// TestCARotation walks a rotation of the operator's CA through its steps:
// asked for by the annotation, each step waiting for the servers, the new
// CA signing only once it is trusted, the old one dropped last; and one
// started when the CA is two thirds through its life.
func TestCARotation(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	obj := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
	c, err := newCASecret(obj, t0)
	if err != nil {
		t.Fatal(err)
	}
	old := c.signer
	moved := func(c caSecret, served bool, now time.Time) (caSecret, bool) {
		t.Helper()
		leaf, err := certs.Leaf(c.signer.Cert)
		if err != nil {
			t.Fatal(err)
		}
		// The data as the Secret stores it, read back.
		next, ok, err := rotateCA(obj, readCASecret(c.data(), map[string]string{vocabulary.AnnotationRotateCA: c.handled}), leaf, served, now)
		if err != nil {
			t.Fatal(err)
		}
		return next, ok
	}
	if _, ok := moved(c, true, t0); ok || c.step() != "" {
		t.Fatalf("a new CA, nothing asked: moved %v, step %q", ok, c.step())
	}

	obj.Annotations = map[string]string{vocabulary.AnnotationRotateCA: "2026-12-06"}
	c, ok := moved(c, false, t0)
	if !ok || c.step() != databasev1.CARotationTrust || !bytes.Equal(c.signer.Cert, old.Cert) {
		t.Fatalf("asked: moved %v to %q, the old CA signing %v", ok, c.step(), bytes.Equal(c.signer.Cert, old.Cert))
	}
	if !bytes.Equal(c.trusted, append(append([]byte{}, old.Cert...), c.next.Cert...)) || c.handled != "2026-12-06" {
		t.Fatalf("trusted %d bytes, handled %q: want both CAs and the request", len(c.trusted), c.handled)
	}
	next := c.next
	if again, ok := moved(c, false, t0); ok || again.step() != databasev1.CARotationTrust {
		t.Fatalf("the servers not there yet, moved %v to %q", ok, again.step())
	}

	c, ok = moved(c, true, t0)
	if !ok || c.step() != databasev1.CARotationSign || !bytes.Equal(c.signer.Cert, next.Cert) || len(c.next.Cert) != 0 {
		t.Fatalf("served: moved %v to %q, the new CA signing %v", ok, c.step(), bytes.Equal(c.signer.Cert, next.Cert))
	}
	if !bytes.Contains(c.trusted, old.Cert) || !bytes.Contains(c.trusted, next.Cert) {
		t.Fatal("the old CA is no longer trusted while the servers may still present its certificate")
	}
	if again, ok := moved(c, false, t0); ok || again.step() != databasev1.CARotationSign {
		t.Fatalf("the servers not there yet, moved %v to %q", ok, again.step())
	}

	c, ok = moved(c, true, t0)
	if !ok || c.step() != "" || !bytes.Equal(c.trusted, next.Cert) {
		t.Fatalf("served: moved %v to %q, trusting the new CA alone %v", ok, c.step(), bytes.Equal(c.trusted, next.Cert))
	}
	if _, ok := moved(c, true, t0.Add(time.Hour)); ok {
		t.Fatal("the same request acted on twice")
	}

	leaf, _ := certs.Leaf(c.signer.Cert)
	if c, ok = moved(c, true, certs.RenewAt(leaf)); !ok || c.step() != databasev1.CARotationTrust {
		t.Fatalf("a CA two thirds through its life: moved %v to %q", ok, c.step())
	}
}

// TestCAName keeps a CA's common name within X.509's 64 characters, and
// two CAs of one MySQL apart.
func TestCAName(t *testing.T) {
	obj := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("d", 63), Namespace: strings.Repeat("n", 63)}}
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	a, b := caName(obj, t0), caName(obj, t0.Add(time.Second))
	if len(a) > 64 || a == b || !strings.HasSuffix(a, " CA 20261206T120000Z") {
		t.Errorf("names %q and %q", a, b)
	}
	if got := caName(&databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}, t0); got != "ns/db CA 20261206T120000Z" {
		t.Errorf("name %q", got)
	}
}

// TestServedEverywhere counts the instances that present a certificate.
func TestServedEverywhere(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ca, _ := certs.NewCA("ca", t0, time.Hour)
	obj := &databasev1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: databasev1.MySQLSpec{Replicas: 2}}
	_, leaf, err := issueServer(ca, children.TLSNames(obj), nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	at := func(tm time.Time) *metav1.Time { return &metav1.Time{Time: tm} }
	obj.Status.Instances = []databasev1.InstanceStatus{{Name: "db-0", CertificateNotAfter: at(leaf.NotAfter)}, {Name: "db-1"}}
	if servedEverywhere(obj, leaf) {
		t.Error("served with db-1 presenting none")
	}
	obj.Status.Instances[1].CertificateNotAfter = at(leaf.NotAfter.Add(-time.Second))
	if servedEverywhere(obj, leaf) {
		t.Error("served with db-1 presenting another")
	}
	obj.Status.Instances[1].CertificateNotAfter = at(leaf.NotAfter)
	if !servedEverywhere(obj, leaf) {
		t.Error("not served with both presenting it")
	}
	// One issued again in the same second expires at another second, so
	// that the servers can be seen loading it.
	_, again, err := issueServer(ca, children.TLSNames(obj), leaf, t0)
	if err != nil || again.NotAfter.Equal(leaf.NotAfter) {
		t.Errorf("issued again: %v, expiring %s as the first", err, again.NotAfter)
	}
}
