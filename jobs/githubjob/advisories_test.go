package githubjob

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/verify/findings"
)

// The pipeline's advisory lookup goes through the app's client as the
// job's installation and hands the judge GitHub's answer as it came.
func TestAdvisoryLookup(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	fake := githubtest.New(t, &key.PublicKey)
	fake.AddAdvisory(githubtest.Advisory{GHSAID: "GHSA-jf85-cpcp-j695", Severity: "critical", Summary: "Prototype pollution", Ecosystem: "npm", Package: "lodash"})
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app, err := githubapi.NewApp(githubtest.AppID, pemKey, fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	lookup := advisories{gh: app, repo: tasks.Issue{InstallationID: 3, Owner: "acme", Repo: "widgets"}}
	list, err := lookup.Advisories(context.Background(), findings.AdvisoryQuery{Ecosystem: "npm", Name: "lodash", Version: "4.17.11"})
	if err != nil || len(list) != 1 || list[0].ID != "GHSA-jf85-cpcp-j695" || list[0].Severity != "critical" || list[0].URL == "" {
		t.Fatalf("%+v, %v; want the critical advisory", list, err)
	}
	if list, err := lookup.Advisories(context.Background(), findings.AdvisoryQuery{Ecosystem: "pip", Name: "lodash", Version: "4.17.11"}); err != nil || len(list) != 0 {
		t.Errorf("another ecosystem: %+v, %v; want none", list, err)
	}
}
