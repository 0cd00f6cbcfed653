// Command temporal-server is the Temporal server (go.temporal.io/server, the version in go.mod) with Ledgerloop's
// authorizer and claim mapper: the local cluster (lab/cluster/build.ts) and the compose deployment
// (deploy/temporal/Dockerfile) both run it instead of the stock `cmd/server`. docs/operations.md ("Who may call
// what at the Temporal frontend") has the table this enforces.
//
//	temporal-server [--config-file F | --root R --config C --env E] start [--service S ...]
//	temporal-server ui-gateway --listen 127.0.0.1:P --frontend 127.0.0.1:F --token-file T
//
// Environment (start):
//
//	LEDGERLOOP_IDENTITY_ISSUERS    the identity issuers file (public keys only; required: without it the server
//	                               refuses to start, it never runs without an authorizer)
//	LEDGERLOOP_FRONTEND_NAMESPACE  the one namespace non-admin callers may use (default `default`)
//	LEDGERLOOP_FRONTEND_VIEWER_CN  a TLS client certificate common name that gets a viewer's rights without a
//	                               token (compose: the Web UI's certificate); unset: none
//
// Without a config file the server renders its embedded template from the environment, as the stock image does.
package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	_ "time/tzdata" // embed tzdata as a fallback

	"github.com/urfave/cli/v2"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/headers"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the postgres12 plugin
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"     // sqlite, for a local trial
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
)

const (
	issuersEnv   = "LEDGERLOOP_IDENTITY_ISSUERS"
	namespaceEnv = "LEDGERLOOP_FRONTEND_NAMESPACE"
	viewerCNEnv  = "LEDGERLOOP_FRONTEND_VIEWER_CN"
)

func main() {
	if err := app().Run(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "temporal-server: %v\n", err)
		os.Exit(1)
	}
}

func app() *cli.App {
	a := cli.NewApp()
	a.Name = "temporal-server"
	a.Usage = "Temporal server with Ledgerloop's frontend authorizer"
	a.Version = headers.ServerVersion
	a.Flags = []cli.Flag{
		&cli.StringFlag{Name: "root", Aliases: []string{"r"}, Value: ".", Usage: "root directory of the config dir"},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: "config", Usage: "config dir, relative to root"},
		&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Value: "development", Usage: "config environment"},
		&cli.StringFlag{Name: "zone", Aliases: []string{"az"}, Usage: "availability zone"},
		&cli.StringFlag{Name: "config-file", Usage: "path to one config file", EnvVars: []string{config.EnvKeyConfigFile}},
	}
	a.Commands = []*cli.Command{
		{
			Name:  "start",
			Usage: "start the server with Ledgerloop's authorizer",
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "service", Aliases: []string{"svc"}, Usage: "service(s) to start (default: every configured one)", EnvVars: []string{"TEMPORAL_SERVICES"}},
			},
			Action: start,
		},
		gatewayCommand(),
	}
	return a
}

func loadConfig(c *cli.Context) (*config.Config, error) {
	switch {
	case c.IsSet("config-file"):
		if c.IsSet("config") || c.IsSet("env") || c.IsSet("zone") || c.IsSet("root") {
			return nil, errors.New("--config-file excludes --config, --env, --zone and --root")
		}
		return config.Load(config.WithConfigFile(c.String("config-file")))
	case c.IsSet("config") || c.IsSet("env") || c.IsSet("zone"):
		return config.Load(
			config.WithEnv(c.String("env")),
			config.WithConfigDir(path.Join(c.String("root"), c.String("config"))),
			config.WithZone(c.String("zone")),
		)
	default:
		return config.Load(config.WithEmbedded())
	}
}

// servicesOf: the --service list, else every default service plus the internal frontend when it is configured.
func servicesOf(c *cli.Context, cfg *config.Config) []string {
	if s := c.StringSlice("service"); len(s) > 0 {
		return s
	}
	services := slices.Clone(temporal.DefaultServices)
	if _, ok := cfg.Services[string(primitives.InternalFrontendService)]; ok {
		services = append(services, string(primitives.InternalFrontendService))
	}
	return services
}

func start(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return errors.New("start takes no arguments (use --service)")
	}
	issuersFile := os.Getenv(issuersEnv)
	if issuersFile == "" {
		return fmt.Errorf("%s is not set: this server never runs without its authorizer", issuersEnv)
	}
	issuers, err := newIssuerSource(issuersFile)
	if err != nil {
		return err
	}
	namespace := os.Getenv(namespaceEnv)
	if namespace == "" {
		namespace = "default"
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return fmt.Errorf("unable to load configuration: %w", err)
	}
	services := servicesOf(c, cfg)
	// The server's own worker service calls the frontend for its system workflows. With an authorizer it must go
	// through the internal frontend (which vouches for the server's own services); without one it would be refused.
	if slices.Contains(services, string(primitives.WorkerService)) && !slices.Contains(services, string(primitives.InternalFrontendService)) {
		return errors.New("the worker service needs the internal-frontend service when the frontend has an authorizer (add services.internal-frontend to the config)")
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	viewerCN := os.Getenv(viewerCNEnv)
	logger.Info("Ledgerloop frontend authorizer.",
		tag.NewStringTag("issuers-file", issuersFile),
		tag.NewStringTag("namespace", namespace),
		tag.NewStringTag("viewer-cn", viewerCN),
	)
	mapper := newClaimMapper(issuers, viewerCN)
	s, err := temporal.NewServer(
		temporal.ForServices(services),
		temporal.WithConfig(cfg),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(newAuthorizer(namespace)),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return mapper }),
	)
	if err != nil {
		return fmt.Errorf("unable to create the server: %w", err)
	}
	if err := s.Start(); err != nil {
		return fmt.Errorf("unable to start the server: %w", err)
	}
	return nil
}
