package plugin

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
	"github.com/example/mysql-operator/login"
)

// credentialsCommand is `kubectl mysql credentials NAME [--user U]`.
func (o *options) credentialsCommand() *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "credentials NAME",
		Short: "Print an option file that logs in to a MySQL's primary, as root or as a MySQLUser's account",
		Long: "Print an option file (the [client] section) that logs in to the MySQL's primary through its Service:\n" +
			"  kubectl mysql credentials orders > orders.cnf; mariadb --defaults-extra-file=orders.cnf\n" +
			"as root, or, with --user, as the account of that MySQLUser. The password is read from the Secret\n" +
			"the operator or you keep it in; it is printed, so send it to a file, not to a shared screen.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := o.mysql(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			name, password, err := o.account(cmd.Context(), m, user)
			if err != nil {
				return err
			}
			text, err := optionFile(m, name, password)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(o.streams.Out, text)
			return err
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "the MySQLUser whose account to print; root when empty")
	return cmd
}

// account is the SQL user and password of root (user empty) or of the
// MySQLUser user of m.
func (o *options) account(ctx context.Context, m *databasev1.MySQL, user string) (string, string, error) {
	name, secret, key := "root", "", ""
	if user == "" {
		secret, key = children.PasswordRef(m)
	} else {
		u := &databasev1.MySQLUser{}
		if err := o.client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: user}, u); err != nil {
			return "", "", fmt.Errorf("MySQLUser %s: %w", user, err)
		}
		if u.Spec.MySQLRef.Name != m.Name {
			return "", "", fmt.Errorf("MySQLUser %s is an account of MySQL %s, not %s", user, u.Spec.MySQLRef.Name, m.Name)
		}
		name, secret, key = u.UserName(), u.Spec.PasswordSecretRef.Name, u.PasswordKey()
	}
	s := &corev1.Secret{}
	if err := o.client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: secret}, s); err != nil {
		return "", "", fmt.Errorf("the password's Secret %s: %w", secret, err)
	}
	pw, ok := s.Data[key]
	if !ok {
		return "", "", fmt.Errorf("Secret %s has no key %q", secret, key)
	}
	return name, strings.TrimRight(string(pw), "\n"), nil
}

// optionFile is the [client] section that logs in to m's primary as user.
func optionFile(m *databasev1.MySQL, user, password string) (string, error) {
	section, err := login.ClientOptions(user, password, fmt.Sprintf("host=%s.%s.svc", children.PrimaryServiceName(m), m.Namespace),
		fmt.Sprintf("port=%d", children.MySQLPort))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# MySQL %s/%s: its primary, through the Service %s\n", m.Namespace, m.Name, children.PrimaryServiceName(m))
	if databasev1.TLSModeOf(m) != databasev1.TLSDisabled {
		fmt.Fprintf(&b, "# TLS: kubectl get secret -n %s %s -o jsonpath='{.data.ca\\.crt}' | base64 -d > %s-ca.crt\n",
			m.Namespace, children.TLSSecretName(m), m.Name)
		fmt.Fprintf(&b, "# then add ssl-ca=%s-ca.crt and ssl-verify-server-cert\n", m.Name)
	}
	return b.String() + section, nil
}
