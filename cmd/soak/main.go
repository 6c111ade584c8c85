// Command soak runs the data plane's soak (package soak) on a local cluster
// with the real node: -rounds faults picked at random from -seed, within
// -duration, under a writer. It prints the report, and with -out writes it
// there. It needs root and `make node`, and takes about a minute a round.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/example/mysql-operator/internal/soak"
)

func main() {
	o := soak.Options{Log: os.Stderr}
	flag.IntVar(&o.Rounds, "rounds", 50, "How many faults to inject.")
	flag.DurationVar(&o.Duration, "duration", 80*time.Minute, "The most the rounds may take.")
	flag.Uint64Var(&o.Seed, "seed", uint64(time.Now().UnixNano()), "The seed of the faults; the report records it.")
	flag.DurationVar(&o.Converge, "converge", 7*time.Minute,
		"How long a round may take to converge: the kubelet backs off up to 5 minutes before it restarts a container killed again and again.")
	out := flag.String("out", "", "A file to write the report to, besides standard output.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := soak.Run(ctx, o)
	if rep != nil {
		text := rep.Markdown(fmt.Sprintf("go run ./cmd/soak -rounds %d -seed %d", o.Rounds, o.Seed)) + "\n"
		fmt.Print(text)
		if *out != "" {
			if werr := os.WriteFile(*out, []byte(text), 0o644); werr != nil {
				fmt.Fprintln(os.Stderr, "write the report:", werr)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", strings.TrimSpace(err.Error()))
		os.Exit(1)
	}
}
