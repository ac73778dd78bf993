package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Where the manifest flow stores the app's identity, under the data
// directory. The directory is 0700 and every file 0600: the private key and
// the webhook secret are the app's credentials.
const (
	// Dir is the credentials directory, relative to the data directory.
	Dir = "app"
	// AppFile holds the app's ID, slug, web address and webhook secret as
	// JSON. It is written last: its presence means configured.
	AppFile = "app.json"
	// KeyFile is the app's private key, PEM, as GitHub issued it; point
	// PATCHWRIGHT_PRIVATE_KEY_FILE here.
	KeyFile = "private-key.pem"
)

// Credentials are what the manifest flow received from GitHub and what
// serve and worker need to act as the app.
type Credentials struct {
	AppID         int64  `json:"app_id"`
	Slug          string `json:"slug"`
	HTMLURL       string `json:"html_url"` // the app's page, https://github.com/apps/<slug>
	WebhookSecret string `json:"webhook_secret"`
	// PrivateKey is the PEM key; it lives in KeyFile, not in AppFile.
	PrivateKey []byte `json:"-"`
}

// ErrConfigured is returned when credentials are already stored: the
// manifest flow never replaces an app's identity.
var ErrConfigured = errors.New("setup: the app is already configured")

// KeyPath is the private key's path under dataDir.
func KeyPath(dataDir string) string { return filepath.Join(dataDir, Dir, KeyFile) }

// Load reads the credentials stored under dataDir. It returns ok=false and
// no error when the flow has not completed there; a partial or unreadable
// store is an error, never taken for "not configured".
func Load(dataDir string) (c Credentials, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, Dir, AppFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Credentials{}, false, nil
	}
	if err != nil {
		return Credentials{}, false, fmt.Errorf("read app credentials: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return Credentials{}, false, fmt.Errorf("read app credentials %s: %w", AppFile, err)
	}
	if c.AppID <= 0 || c.WebhookSecret == "" {
		return Credentials{}, false, fmt.Errorf("read app credentials %s: no app ID or webhook secret", AppFile)
	}
	if c.PrivateKey, err = os.ReadFile(KeyPath(dataDir)); err != nil {
		return Credentials{}, false, fmt.Errorf("read app private key: %w", err)
	}
	return c, true, nil
}

// save writes c under dataDir: the key first, then AppFile, each through
// a temporary file renamed into place, so a crash leaves either nothing
// configured or everything.
func save(dataDir string, c Credentials) error {
	dir := filepath.Join(dataDir, Dir)
	if _, err := os.Stat(filepath.Join(dir, AppFile)); err == nil {
		return ErrConfigured
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	// MkdirAll leaves an existing directory's mode alone.
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	meta, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := writePrivate(dir, KeyFile, c.PrivateKey); err != nil {
		return err
	}
	return writePrivate(dir, AppFile, append(meta, '\n'))
}

// writePrivate writes a 0600 file atomically.
func writePrivate(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
