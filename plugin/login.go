package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	databasev1 "github.com/example/mysql-operator/api/v1"
	"github.com/example/mysql-operator/controller/children"
)

// loginCommand is `kubectl mysql login NAME [INSTANCE] [--replica] [-- CLIENT ARGS]`.
func (o *options) loginCommand() *cobra.Command {
	var replica bool
	var user string
	cmd := &cobra.Command{
		Use:   "login NAME [INSTANCE] [-- CLIENT ARGS]",
		Short: "Open a client session in a MySQL's pod: the primary's, a ready replica's, or INSTANCE's",
		Long: "Run the image's client (mariadb or mysql) in the server's container of a pod, logged in on its socket as\n" +
			"root, or, with --user, as a MySQLUser's account. The password is read from its Secret here and sent on the\n" +
			"session's standard input: it is never on a command line, in an environment or in a history file.\n" +
			"  kubectl mysql login orders                 # the primary\n" +
			"  kubectl mysql login orders --replica -- -e 'SHOW REPLICA STATUS\\G'",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var clientArgs []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				args, clientArgs = args[:dash], args[dash:]
			}
			if len(args) == 0 || len(args) > 2 {
				return errors.New("want NAME [INSTANCE]")
			}
			instance := ""
			if len(args) == 2 {
				instance = args[1]
			}
			return o.login(cmd.Context(), args[0], instance, replica, user, clientArgs)
		},
	}
	cmd.Flags().BoolVar(&replica, "replica", false, "log in to a ready replica rather than the primary")
	cmd.Flags().StringVar(&user, "user", "", "the MySQLUser whose account to log in as; root when empty")
	return cmd
}

// login runs `agent login` in the pod chosen, the password on its stdin.
func (o *options) login(ctx context.Context, name, instance string, replica bool, user string, clientArgs []string) error {
	m, err := o.mysql(ctx, name)
	if err != nil {
		return err
	}
	pod, err := podToLogIn(m, instance, replica)
	if err != nil {
		return err
	}
	sqlUser, password, err := o.account(ctx, m, user)
	if err != nil {
		return err
	}
	return o.execLogin(ctx, m.Namespace, pod, children.LoginCommand(sqlUser, clientArgs), password, o.streams.In)
}

// podToLogIn is the pod a login goes to: INSTANCE when given, else a
// ready replica with --replica, else the primary.
func podToLogIn(m *databasev1.MySQL, instance string, replica bool) (string, error) {
	switch {
	case instance != "":
		return instanceName(m, instance)
	case replica:
		for _, in := range m.Status.Instances {
			if in.Role == databasev1.RoleReplica && in.Ready {
				return in.Name, nil
			}
		}
		return "", fmt.Errorf("MySQL %s has no ready replica", m.Name)
	case m.Status.CurrentPrimary == "":
		return "", fmt.Errorf("MySQL %s has no primary now (kubectl mysql status %s)", m.Name, m.Name)
	}
	return m.Status.CurrentPrimary, nil
}
