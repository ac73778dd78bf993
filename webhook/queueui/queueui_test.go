package queueui

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
)

const password = "correct horse battery staple"

// serve mounts the dashboard as serve would and enqueues one task, so the
// API has something to show.
func serve(t *testing.T, readOnly bool) *httptest.Server {
	t.Helper()
	mr := miniredis.RunT(t)
	opt := asynq.RedisClientOpt{Addr: mr.Addr()}
	c := asynq.NewClient(opt)
	defer c.Close()
	if _, err := c.Enqueue(asynq.NewTask("issue:solve", []byte(`{}`)), asynq.Queue("agent")); err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Redis: opt, Password: password, ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	mux := http.NewServeMux()
	mux.Handle(DefaultPath+"/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, method, url string, prep func(*http.Request)) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(req)
	}
	resp, err := http.DefaultTransport.RoundTrip(req) // no redirects followed
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func auth(user, pass string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}

func TestRefusesWithoutTheRightCredentials(t *testing.T) {
	srv := serve(t, false)
	for name, prep := range map[string]func(*http.Request){
		"none":           nil,
		"wrong password": auth(DefaultUsername, password+"x"),
		"wrong user":     auth("admin", password),
		"empty":          auth("", ""),
		"bearer":         func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+password) },
	} {
		for _, path := range []string{"/queue/", "/queue/api/queues", "/queue/api/queues/agent"} {
			code, hdr, body := do(t, http.MethodGet, srv.URL+path, prep)
			if code != http.StatusUnauthorized {
				t.Errorf("%s, GET %s: status %d, want 401", name, path, code)
			}
			if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic ") {
				t.Errorf("%s, GET %s: no basic challenge", name, path)
			}
			if strings.Contains(body, "agent") {
				t.Errorf("%s, GET %s: leaked queue data: %s", name, path, body)
			}
		}
	}
	// A state-changing call without credentials changes nothing.
	if code, _, _ := do(t, http.MethodDelete, srv.URL+"/queue/api/queues/agent", nil); code != http.StatusUnauthorized {
		t.Errorf("unauthenticated DELETE: %d", code)
	}
}

func TestServesTheDashboardToTheOperator(t *testing.T) {
	srv := serve(t, false)
	ok := auth(DefaultUsername, password)
	code, _, body := do(t, http.MethodGet, srv.URL+"/queue/", ok)
	if code != http.StatusOK || !strings.Contains(body, "<html") {
		t.Fatalf("GET /queue/: %d\n%.300s", code, body)
	}
	code, _, body = do(t, http.MethodGet, srv.URL+"/queue/api/queues", ok)
	if code != http.StatusOK {
		t.Fatalf("GET /queue/api/queues: %d %s", code, body)
	}
	var got struct {
		Queues []struct {
			Queue   string `json:"queue"`
			Pending int    `json:"pending"`
		} `json:"queues"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(got.Queues) != 1 || got.Queues[0].Queue != "agent" || got.Queues[0].Pending != 1 {
		t.Fatalf("queues = %+v", got.Queues)
	}
}

func TestRefusesCrossSiteChanges(t *testing.T) {
	srv := serve(t, false)
	cross := func(r *http.Request) {
		r.SetBasicAuth(DefaultUsername, password)
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		r.Header.Set("Origin", "https://evil.example")
	}
	if code, _, _ := do(t, http.MethodPost, srv.URL+"/queue/api/queues/agent:pause", cross); code != http.StatusForbidden {
		t.Fatalf("cross-site POST with the operator's credentials: %d, want 403", code)
	}
	code, _, body := do(t, http.MethodGet, srv.URL+"/queue/api/queues/agent", auth(DefaultUsername, password))
	if code != http.StatusOK || strings.Contains(body, `"paused":true`) {
		t.Fatalf("queue after a refused cross-site pause: %d %s", code, body)
	}
	same := func(r *http.Request) {
		r.SetBasicAuth(DefaultUsername, password)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if code, _, body := do(t, http.MethodPost, srv.URL+"/queue/api/queues/agent:pause", same); code >= 300 {
		t.Fatalf("same-origin POST: %d %s", code, body)
	}
	// The same check sees the pause the dashboard itself made.
	if _, _, body := do(t, http.MethodGet, srv.URL+"/queue/api/queues/agent", auth(DefaultUsername, password)); !strings.Contains(body, `"paused":true`) {
		t.Fatalf("queue after a same-origin pause: %s", body)
	}
}

func TestNeverOpenByDefault(t *testing.T) {
	opt := asynq.RedisClientOpt{Addr: "127.0.0.1:1"}
	for name, cfg := range map[string]Config{
		"no password":    {Redis: opt},
		"short password": {Redis: opt, Password: "hunter2"},
		"no redis":       {Password: password},
		"bad path":       {Redis: opt, Password: password, Path: "queue/"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}
