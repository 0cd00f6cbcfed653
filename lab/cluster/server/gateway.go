package main

// The Web UI's way in, on the local cluster: a gRPC pass-through on loopback that forwards each call of the UI
// server to the frontend with a viewer's token (read from a file the cluster refreshes) in place of whatever
// `authorization` the call carried. The UI then has exactly a viewer's rights: it lists and reads, and the frontend
// refuses its signal, cancel, terminate and reset. The compose deployment needs no gateway: there the UI's client
// certificate is mapped to the viewer role (LEDGERLOOP_FRONTEND_VIEWER_CN).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"go.temporal.io/server/common/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// frame is one gRPC message, passed through without decoding it.
type frame struct{ data []byte }

type passThroughCodec struct{}

func (passThroughCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("gateway: unexpected message %T", v)
	}
	return f.data, nil
}

func (passThroughCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("gateway: unexpected message %T", v)
	}
	f.data = append(f.data[:0], data...)
	return nil
}

// Name: the codec stands in for protobuf on both sides.
func (passThroughCodec) Name() string { return "proto" }

// tokenFile reads a token file again when it changes.
type tokenFile struct {
	path    string
	mu      sync.Mutex
	modTime time.Time
	token   string
}

func (t *tokenFile) current() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := os.Stat(t.path)
	if err != nil {
		return "", fmt.Errorf("the viewer token file is unreadable")
	}
	if t.token != "" && st.ModTime().Equal(t.modTime) {
		return t.token, nil
	}
	raw, err := os.ReadFile(t.path)
	tok := strings.TrimSpace(string(raw))
	if err != nil || !compactJWS.MatchString(tok) {
		return "", fmt.Errorf("the viewer token file holds no token")
	}
	t.token, t.modTime = tok, st.ModTime()
	return tok, nil
}

type gateway struct {
	conn  *grpc.ClientConn
	token *tokenFile
}

// forwarded: the services the UI server uses; nothing else passes.
func forwarded(method string) bool {
	return strings.HasPrefix(method, api.WorkflowServicePrefix) || strings.HasPrefix(method, api.OperatorServicePrefix) ||
		strings.HasPrefix(method, "/grpc.health.v1.Health/")
}

func (g *gateway) handle(_ any, in grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(in)
	if !ok || !forwarded(method) {
		return status.Errorf(codes.Unimplemented, "the UI gateway does not forward %s", method)
	}
	token, err := g.token.current()
	if err != nil {
		return status.Error(codes.Unavailable, "UI gateway: "+err.Error())
	}
	md, _ := metadata.FromIncomingContext(in.Context())
	md = md.Copy()
	md.Delete("authorization")
	md.Delete("authorization-extras")
	md.Set("authorization", "Bearer "+token)
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(in.Context(), md))
	defer cancel()
	out, err := g.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method,
		grpc.ForceCodec(passThroughCodec{}))
	if err != nil {
		return err
	}
	go func() {
		for {
			f := &frame{}
			if err := in.RecvMsg(f); err != nil {
				if errors.Is(err, io.EOF) {
					_ = out.CloseSend()
				} else {
					cancel()
				}
				return
			}
			if err := out.SendMsg(f); err != nil {
				return
			}
		}
	}()
	sentHeader := false
	for {
		f := &frame{}
		if err := out.RecvMsg(f); err != nil {
			in.SetTrailer(out.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if !sentHeader {
			if h, err := out.Header(); err == nil {
				_ = in.SendHeader(h)
			}
			sentHeader = true
		}
		if err := in.SendMsg(f); err != nil {
			return err
		}
	}
}

func gatewayCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui-gateway",
		Usage: "forward the Web UI's calls to the frontend with a viewer's token",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Required: true, Usage: "loopback host:port to listen on"},
			&cli.StringFlag{Name: "frontend", Required: true, Usage: "the frontend's host:port"},
			&cli.StringFlag{Name: "token-file", Required: true, Usage: "a file holding the viewer's token (re-read when it changes)"},
		},
		Action: func(c *cli.Context) error {
			host, _, err := net.SplitHostPort(c.String("listen"))
			if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
				return errors.New("--listen must be a loopback address: whoever reaches the gateway reads as a viewer")
			}
			tf := &tokenFile{path: c.String("token-file")}
			if _, err := tf.current(); err != nil {
				return err
			}
			conn, err := grpc.NewClient(c.String("frontend"), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return err
			}
			defer conn.Close()
			lis, err := net.Listen("tcp", c.String("listen"))
			if err != nil {
				return err
			}
			g := &gateway{conn: conn, token: tf}
			srv := grpc.NewServer(grpc.UnknownServiceHandler(g.handle), grpc.ForceServerCodec(passThroughCodec{}))
			fmt.Fprintf(os.Stderr, "ui-gateway: %s -> %s (viewer token from %s)\n", lis.Addr(), c.String("frontend"), tf.path)
			return srv.Serve(lis)
		},
	}
}
