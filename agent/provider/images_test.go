package provider_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/jobs/githubtest"
)

// pngBytes stands for a re-encoded image: the provider sends whatever
// bytes it is given, so any will do to see them on the wire.
var pngBytes = []byte("\x89PNG\r\n\x1a\n pixels")

func imageRequest() provider.Request {
	return provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Text: "The button is cut off:",
		Images: []provider.Image{{MediaType: "image/png", Data: pngBytes}}}}}
}

// TestOpenAISendsImages: the image reaches the wire as a data URL part
// after the text part.
func TestOpenAISendsImages(t *testing.T) {
	srv := newWireServer(t, sseReply(fixture(t, "openai.chat.completion.stream.finish_length.sse")))
	p := newProvider(t, "openai:gpt-4o", srv, &githubtest.Sleeps{})
	if _, err := p.Complete(context.Background(), imageRequest()); err != nil {
		t.Fatal(err)
	}
	msgs := srv.body(0)["messages"].([]any)
	parts, ok := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	if !ok || len(parts) != 2 {
		t.Fatalf("user content = %v, want a text and an image part", msgs[len(msgs)-1])
	}
	text, img := parts[0].(map[string]any), parts[1].(map[string]any)
	if text["type"] != "text" || text["text"] != "The button is cut off:" {
		t.Errorf("text part = %v", text)
	}
	url, _ := img["image_url"].(map[string]any)["url"].(string)
	if img["type"] != "image_url" || url != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngBytes) {
		t.Errorf("image part = %v", img)
	}
}

// TestAnthropicSendsImages: the image reaches the wire as a base64 image
// block after the text block.
func TestAnthropicSendsImages(t *testing.T) {
	srv := newWireServer(t, sseReply(sseFixture(t, "anthropic.messages.stream.tool_use.sse")))
	p := newProvider(t, "anthropic:claude-sonnet-4-5", srv, &githubtest.Sleeps{})
	if _, err := p.Complete(context.Background(), imageRequest()); err != nil {
		t.Fatal(err)
	}
	blocks := srv.body(0)["messages"].([]any)[0].(map[string]any)["content"].([]any)
	if len(blocks) != 2 || blocks[0].(map[string]any)["type"] != "text" {
		t.Fatalf("content = %v, want a text and an image block", blocks)
	}
	img := blocks[1].(map[string]any)
	src, _ := img["source"].(map[string]any)
	if img["type"] != "image" || src["type"] != "base64" || src["media_type"] != "image/png" {
		t.Fatalf("image block = %v", img)
	}
	data, err := base64.StdEncoding.DecodeString(src["data"].(string))
	if err != nil || !bytes.Equal(data, pngBytes) {
		t.Errorf("image data = %q, %v", data, err)
	}
}

func TestImagesRefused(t *testing.T) {
	cases := map[string]struct {
		msg  provider.Message
		want string
	}{
		"assistant image": {provider.Message{Role: provider.RoleAssistant, Text: "x", Images: []provider.Image{{MediaType: "image/png", Data: pngBytes}}}, "cannot carry images"},
		"svg":             {provider.Message{Role: provider.RoleUser, Images: []provider.Image{{MediaType: "image/svg+xml", Data: pngBytes}}}, `media type "image/svg+xml"`},
		"empty image":     {provider.Message{Role: provider.RoleUser, Images: []provider.Image{{MediaType: "image/png"}}}, "image 0 is empty"},
	}
	for name, c := range cases {
		for _, model := range []string{"openai:gpt-4o", "anthropic:claude-sonnet-4-5"} {
			t.Run(name+"/"+model, func(t *testing.T) {
				srv := newWireServer(t)
				p := newProvider(t, model, srv, &githubtest.Sleeps{})
				_, err := p.Complete(context.Background(), provider.Request{Messages: []provider.Message{c.msg}})
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("err = %v, want %q", err, c.want)
				}
				if srv.requests() != 0 {
					t.Error("a refused message was sent")
				}
			})
		}
	}
}
