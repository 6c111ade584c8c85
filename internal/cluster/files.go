package cluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// writeFiles writes the static token file, the ServiceAccount signing key
// pair and the kubeconfigs of the admin and the operator.
func (c *Cluster) writeFiles() error {
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n%s,%s,operator,system:serviceaccounts\n", adminToken, operatorToken, OperatorUser)
	if err := os.WriteFile(filepath.Join(c.Dir, "pki", "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "pki", "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "pki", "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return err
	}
	server := fmt.Sprintf("https://%s:%d", c.apiAddress(), c.ports["kube-apiserver"])
	c.Config = &rest.Config{Host: server, BearerToken: adminToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 200, Burst: 400}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	c.OperatorKubeconfig = filepath.Join(c.Dir, "operator.kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, server, "admin", adminToken); err != nil {
		return err
	}
	return writeKubeconfig(c.OperatorKubeconfig, server, "mysql-operator", operatorToken)
}

// writeKubeconfig writes a kubeconfig of one user with a bearer token.
func writeKubeconfig(path, server, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}
