package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client is the operator's side of an agent's endpoints: seeds and crashes.
type Client struct {
	base, token string
	http        *http.Client
}

// NewClient returns a client of the agent at addr (host:port), with the
// agent's password as token.
func NewClient(addr, token string) *Client {
	return &Client{base: "http://" + addr, token: token, http: &http.Client{Timeout: 10 * time.Second}}
}

// SeedStatus returns the state of the instance's seed.
func (c *Client) SeedStatus(ctx context.Context) (SeedStatus, error) {
	var st SeedStatus
	body, err := c.do(ctx, http.MethodGet, nil)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("seed status of %s: %w", c.base, err)
	}
	return st, nil
}

// StartSeed asks the agent to copy the donor's data.
func (c *Client) StartSeed(ctx context.Context, req SeedRequest) error {
	data, _ := json.Marshal(req) // strings always marshal
	_, err := c.do(ctx, http.MethodPost, data)
	return err
}

// ClearSeed forgets a Restored or Failed seed.
func (c *Client) ClearSeed(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodDelete, nil)
	return err
}

// Crash asks the agent to kill its server (Config.Crash).
func (c *Client) Crash(ctx context.Context) error {
	_, err := c.request(ctx, http.MethodPost, "/crash", nil)
	return err
}

// do sends one request to /seed and returns the answer's body.
func (c *Client) do(ctx context.Context, method string, body []byte) ([]byte, error) {
	return c.request(ctx, method, "/seed", body)
}

// request sends one request to path and returns the answer's body.
func (c *Client) request(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s%s: %w", method, c.base, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s%s: %s: %s", method, c.base, path, resp.Status, bytes.TrimSpace(data))
	}
	return data, nil
}
