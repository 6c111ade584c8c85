package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Client is the operator's side of an agent's endpoints: seeds and crashes.
type Client struct {
	base, token string
	http        *http.Client
}

// NewClient returns a client of the agent at addr (host:port), with the
// agent's password as token, over TLS with tlsConfig (the agent's API
// port), or in clear when it is nil.
func NewClient(addr, token string, tlsConfig *tls.Config) *Client {
	if tlsConfig == nil {
		return &Client{base: "http://" + addr, token: token, http: &http.Client{Timeout: 10 * time.Second}}
	}
	// A client is made per request to an agent (seeds, backups: seldom),
	// so its connection is not kept for another.
	return &Client{base: "https://" + addr, token: token,
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}}}
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

// StartBackup asks the agent to back its instance up.
func (c *Client) StartBackup(ctx context.Context, req BackupRequest) error {
	data, _ := json.Marshal(req) // strings always marshal
	_, err := c.request(ctx, http.MethodPost, "/backups", data)
	return err
}

// BackupStatus returns the state of backup name; found is false when the
// agent knows none (it restarted since, or was never asked).
func (c *Client) BackupStatus(ctx context.Context, name string) (st BackupStatus, found bool, err error) {
	body, code, err := c.requestCode(ctx, http.MethodGet, "/backups/"+url.PathEscape(name), nil)
	if code == http.StatusNotFound {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, false, fmt.Errorf("backup status of %s: %w", c.base, err)
	}
	return st, true, nil
}

// Restored returns what the restore that made the instance's data
// directory reached; found is false when no restore made it.
func (c *Client) Restored(ctx context.Context) (res RestoreResult, found bool, err error) {
	body, code, err := c.requestCode(ctx, http.MethodGet, "/restore", nil)
	if code == http.StatusNotFound {
		return res, false, nil
	}
	if err != nil {
		return res, false, err
	}
	return res, true, json.Unmarshal(body, &res)
}

// do sends one request to /seed and returns the answer's body.
func (c *Client) do(ctx context.Context, method string, body []byte) ([]byte, error) {
	return c.request(ctx, method, "/seed", body)
}

// request sends one request to path and returns the answer's body.
func (c *Client) request(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	data, _, err := c.requestCode(ctx, method, path, body)
	return data, err
}

// requestCode is request that also returns the answer's status code.
func (c *Client) requestCode(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s%s: %w", method, c.base, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, fmt.Errorf("%s %s%s: %s: %s", method, c.base, path, resp.Status, bytes.TrimSpace(data))
	}
	return data, resp.StatusCode, nil
}
