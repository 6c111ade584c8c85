package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/example/mysql-operator/internal/cluster"
)

// serviceDeadline bounds how long the sample's Service may take to answer
// once the MySQL is Ready.
const serviceDeadline = time.Minute

// queryVersion logs in as root through the sample's client Service, with
// the password of the Secret the operator generated, and runs SELECT
// VERSION() with the mariadb client of the host. It returns how to connect.
func queryVersion(ctx context.Context, c *cluster.Cluster, sample *unstructured.Unstructured) (string, error) {
	name, ns := sample.GetName(), sample.GetNamespace()
	svc := &corev1.Service{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		return "", err
	}
	secret := &corev1.Secret{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-root"}, secret); err != nil {
		return "", err
	}
	fmt.Printf("\n$ mariadb -h %s -u root -e 'SELECT VERSION()'   # through Service %s, password from Secret %s-root\n", svc.Spec.ClusterIP, name, name)
	// A Ready MySQL's Service may not be routed yet: kube-proxy programs
	// it on its own time. The query is tried again until serviceDeadline.
	var out []byte
	err := wait.PollUntilContextTimeout(ctx, time.Second, serviceDeadline, true, func(ctx context.Context) (bool, error) {
		cmd := exec.CommandContext(ctx, "mariadb", "-h", svc.Spec.ClusterIP, "-u", "root", "-e", "SELECT VERSION()")
		// The password goes through the environment, never the command line.
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+string(secret.Data["password"]))
		var err error
		out, err = cmd.CombinedOutput()
		return err == nil, nil
	})
	os.Stdout.Write(out)
	if err != nil {
		return "", fmt.Errorf("query the sample through its Service for %s: %w", serviceDeadline, err)
	}
	return fmt.Sprintf("    MYSQL_PWD=$(%s get secret %s-root -o jsonpath='{.data.password}' | base64 -d) mariadb -h %s -u root\n",
		"kubectl", name, svc.Spec.ClusterIP), nil
}
