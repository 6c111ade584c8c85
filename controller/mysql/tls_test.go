package mysql

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/certs"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/controller/vocabulary"
	"github.com/example/mysql-operator/internal/ctrltest"
)

// secretData waits for the Secret name of ns and returns its data once
// ok accepts it.
func secretData(t *testing.T, ns, name, what string, ok func(map[string][]byte) bool) map[string][]byte {
	t.Helper()
	s := &corev1.Secret{}
	ctrltest.Eventually(t, what, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
		return err == nil && ok(s.Data), client.IgnoreNotFound(err)
	})
	return s.Data
}

// TestTLSCertificates: a new MySQL gets its CA and a certificate it signed
// naming every pod and Service, status says when it expires; a new
// instance's name, or a certificate past two thirds of its life, gets a
// new certificate from the same CA; an unreadable CA stalls the MySQL
// naming its Secret.
func TestTLSCertificates(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 2)
	key := env.Create(t, m)
	valid := func(m *databasev1.MySQL) func(map[string][]byte) bool {
		return func(d map[string][]byte) bool { return certs.Check(d, children.TLSNames(m), time.Now()) == nil }
	}
	server := secretData(t, ns, "db-tls", "a certificate naming both instances", valid(m))
	ca := secretData(t, ns, "db-ca", "the CA", func(map[string][]byte) bool { return true })
	if !bytes.Equal(server[certs.CAKey], ca[certs.CertKey]) {
		t.Fatal("db-tls's ca.crt is not db-ca's certificate")
	}
	leaf, err := certs.Leaf(server[certs.CertKey])
	if err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "status.tls", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, m)
		return err == nil && m.Status.TLS != nil && m.Status.TLS.NotAfter.Time.Equal(leaf.NotAfter.Truncate(time.Second)), err
	})
	sts := &appsv1.StatefulSet{}
	if err := env.Client.Get(ctx, key, sts); err != nil {
		t.Fatal(err)
	}
	if !children.ServesTLS(&corev1.Pod{ObjectMeta: sts.Spec.Template.ObjectMeta}) {
		t.Error("the pods do not mount the certificate")
	}

	t.Run("a new instance is named", func(t *testing.T) {
		env.SetReplicas(t, m, 3)
		secretData(t, ns, "db-tls", "a certificate naming db-2", valid(m))
		if again := secretData(t, ns, "db-ca", "the CA", func(map[string][]byte) bool { return true }); !bytes.Equal(again[certs.CertKey], ca[certs.CertKey]) {
			t.Error("the CA changed")
		}
	})

	t.Run("renewed at two thirds of its life", func(t *testing.T) {
		pair := certs.KeyPair{Cert: ca[certs.CertKey], Key: ca[certs.KeyKey]}
		old, err := certs.Issue(pair, children.TLSNames(m), time.Now().Add(-2*time.Hour), 150*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-tls"}, s); err != nil {
			t.Fatal(err)
		}
		s.Data[certs.CertKey], s.Data[certs.KeyKey] = old.Cert, old.Key
		if err := env.Client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		secretData(t, ns, "db-tls", "a renewed certificate", func(d map[string][]byte) bool {
			l, err := certs.Leaf(d[certs.CertKey])
			return err == nil && time.Now().Before(certs.RenewAt(l)) && valid(m)(d)
		})
	})

	t.Run("an unreadable CA stalls", func(t *testing.T) {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-ca"}, s); err != nil {
			t.Fatal(err)
		}
		s.Data[certs.KeyKey] = []byte("junk")
		if err := env.Client.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		env.WaitKstatus(t, key, status.FailedStatus)
		if err := env.Client.Get(ctx, key, m); err != nil {
			t.Fatal(err)
		}
		c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled)
		if c == nil || c.Reason != vocabulary.ReasonSecretInvalid || !strings.Contains(c.Message, "Secret db-ca") {
			t.Errorf("Stalled = %+v, want %s naming Secret db-ca", c, vocabulary.ReasonSecretInvalid)
		}
	})
}

// TestTLSDisabled: a MySQL with TLS disabled has no certificate, mounts
// none and its status says none.
func TestTLSDisabled(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	m.Spec.TLS = &databasev1.TLSSpec{Mode: databasev1.TLSDisabled}
	key := env.Create(t, m)
	sts := &appsv1.StatefulSet{}
	ctrltest.Eventually(t, "the StatefulSet", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, sts)
		return err == nil, client.IgnoreNotFound(err)
	})
	if children.ServesTLS(&corev1.Pod{ObjectMeta: sts.Spec.Template.ObjectMeta}) {
		t.Error("the pods mount a certificate")
	}
	for _, name := range []string{"db-tls", "db-ca"} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("Secret %s: %v, want none", name, err)
		}
	}
	if err := env.Client.Get(ctx, key, m); err != nil {
		t.Fatal(err)
	}
	if m.Status.TLS != nil {
		t.Errorf("status.tls = %+v", m.Status.TLS)
	}
}

// TestTLSFromSecret: a MySQL whose certificate is in a Secret of its
// owner's stalls while it is missing, copies it into db-tls once it is
// good, keeps that copy and stalls naming what is wrong when a bad one
// replaces it, and warns once a good one is past two thirds of its life.
func TestTLSFromSecret(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	m.Spec.TLS = &databasev1.TLSSpec{SecretName: "corp-tls"}
	key := env.Create(t, m)
	stalled := func(reason, part string) {
		t.Helper()
		ctrltest.Eventually(t, "Stalled "+reason+" naming "+part, func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, key, m)
			c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled)
			return err == nil && c != nil && c.Status == "True" && c.Reason == reason && strings.Contains(c.Message, part), err
		})
	}
	stalled(vocabulary.ReasonSecretNotFound, "tls.secretName: Secret corp-tls not found")

	ca, err := certs.NewCA("corp CA", time.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	good, err := certs.Issue(ca, children.TLSNames(m), time.Now(), 10*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "corp-tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{certs.CertKey: good.Cert, certs.KeyKey: good.Key, certs.CAKey: ca.Cert}}
	if err := env.Client.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	secretData(t, ns, "db-tls", "db-tls, a copy of corp-tls", func(d map[string][]byte) bool { return bytes.Equal(d[certs.CertKey], good.Cert) })
	ctrltest.Eventually(t, "status.tls from the Secret", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, m)
		return err == nil && m.Status.TLS != nil && m.Status.TLS.Source == vocabulary.TLSSourceSecret &&
			ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled) == nil, err
	})

	other, err := certs.Issue(ca, children.TLSNames(m), time.Now(), 10*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	src.Data[certs.KeyKey] = other.Key // not tls.crt's key
	if err := env.Client.Update(ctx, src); err != nil {
		t.Fatal(err)
	}
	stalled(vocabulary.ReasonSecretInvalid, "tls.secretName: Secret corp-tls: tls.crt does not match tls.key")
	if d := secretData(t, ns, "db-tls", "db-tls", func(map[string][]byte) bool { return true }); !bytes.Equal(d[certs.KeyKey], good.Key) {
		t.Error("the bad key reached db-tls")
	}

	aging, err := certs.Issue(ca, children.TLSNames(m), time.Now().Add(-2*time.Hour), 150*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	src.Data[certs.CertKey], src.Data[certs.KeyKey] = aging.Cert, aging.Key
	if err := env.Client.Update(ctx, src); err != nil {
		t.Fatal(err)
	}
	ctrltest.Eventually(t, "CertificateExpiring", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, m)
		c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionCertificateExpiring)
		return err == nil && c != nil && c.Status == "True" && strings.Contains(c.Message, "Secret corp-tls expires at"), err
	})
	ctrltest.Eventually(t, "a CertificateExpiring event", func(ctx context.Context) (bool, error) {
		return env.HasEvent(ctx, ns, vocabulary.EventCertificateExpiring, "corp-tls")
	})
}

// standInCRD is a minimal stand-in for another project's CRD (a
// namespaced kind of version v1 taking any object): the operator needs
// only that the API server serves the kind.
func standInCRD(group, plural, kind string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// TestTLSFromCertManager: without cert-manager the MySQL stalls saying so;
// once its CRD is served, the operator writes the Certificate and waits,
// in progress, until cert-manager's Secret appears, then uses it.
func TestTLSFromCertManager(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	m := ctrltest.NewMySQL(ns, "db", 1)
	m.Spec.TLS = &databasev1.TLSSpec{CertManager: &databasev1.CertManagerTLS{IssuerRef: databasev1.IssuerReference{Name: "corp", Kind: "ClusterIssuer"}}}
	key := env.Create(t, m)
	ctrltest.Eventually(t, "Stalled: cert-manager is not installed", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, m)
		c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled)
		return err == nil && c != nil && strings.Contains(c.Message, "tls.certManager: cert-manager is not installed"), err
	})

	crd := standInCRD("cert-manager.io", "certificates", "Certificate")
	if err := env.Client.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })
	cert := &unstructured.Unstructured{}
	cert.SetAPIVersion("cert-manager.io/v1")
	cert.SetKind("Certificate")
	ctrltest.Eventually(t, "the Certificate", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-server"}, cert)
		return err == nil, client.IgnoreNotFound(ignoreNoMatch(err))
	})
	if name, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name"); name != "corp" {
		t.Errorf("the Certificate's issuer is %q", name)
	}
	ctrltest.Eventually(t, "in progress, waiting for cert-manager", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, m)
		c := ctrltest.Condition(m.Status.Conditions, databasev1.ConditionReconciling)
		return err == nil && c != nil && c.Reason == vocabulary.ReasonCertificatePending &&
			ctrltest.Condition(m.Status.Conditions, databasev1.ConditionStalled) == nil, err
	})

	// cert-manager writes the Secret.
	ca, err := certs.NewCA("corp CA", time.Now(), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.Issue(ca, children.TLSNames(m), time.Now(), 10*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	issued := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-server-tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{certs.CertKey: pair.Cert, certs.KeyKey: pair.Key, certs.CAKey: ca.Cert}}
	if err := env.Client.Create(ctx, issued); err != nil {
		t.Fatal(err)
	}
	secretData(t, ns, "db-tls", "db-tls, a copy of cert-manager's", func(d map[string][]byte) bool { return bytes.Equal(d[certs.CertKey], pair.Cert) })
	ctrltest.Eventually(t, "status.tls from cert-manager", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, m)
		return err == nil && m.Status.TLS != nil && m.Status.TLS.Source == vocabulary.TLSSourceCertManager, err
	})
}

// ignoreNoMatch is nil for a kind the client's mapper does not know yet.
func ignoreNoMatch(err error) error {
	if meta.IsNoMatchError(err) {
		return nil
	}
	return err
}
