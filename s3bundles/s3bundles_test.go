package s3bundles

import (
	"strings"
	"testing"

	"github.com/hgfs/hgfs/wireproto"
)

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"s3://bundles":             {Bucket: "bundles"},
		"s3://bundles/":            {Bucket: "bundles"},
		"s3://bundles/a/b/":        {Bucket: "bundles", Prefix: "a/b"},
		"s3://my.bucket-1/repo.hg": {Bucket: "my.bucket-1", Prefix: "repo.hg"},
	} {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "bundles", "http://x/y", "s3://", "s3://B/x", "s3://a/x//y", "s3://ab/x\ny", "s3://-ab/x"} {
		if got, err := ParseTarget(in); err == nil {
			t.Errorf("ParseTarget(%q) = %+v, want an error", in, got)
		}
	}
}

// TestEntryLine: the lines refresh writes parse as hg's manifest lines,
// with the spec hg's debugbundle --spec prints and its requirements.
func TestEntryLine(t *testing.T) {
	e := Entry{
		URL:    "https://bundles.example/r/abc.hg?X-Amz-Signature=00&X-Amz-Expires=60",
		Bundle: Bundle{Kind: "stream-v2", Spec: "none-v2;stream=v2;requirements%3Dgeneraldelta%2Crevlogv1", Compression: "none"},
		Object: Object{Size: 42, SHA256: strings.Repeat("ab", 32)},
		Heads:  []string{strings.Repeat("1", 40), strings.Repeat("2", 40)},
	}
	line := e.Line()
	p, ok := wireproto.ParseCloneBundleLine(line)
	if !ok || p.SpecErr != nil {
		t.Fatalf("%q: ok %v, spec error %v", line, ok, p.SpecErr)
	}
	if p.URL != e.URL || !p.Spec.IsStreamClone() || strings.Join(p.Spec.Requirements(), ",") != "generaldelta,revlogv1" {
		t.Errorf("%q parsed as %+v (requirements %v)", line, p, p.Spec.Requirements())
	}
	for k, v := range map[string]string{"REQUIRESNI": "true", "COMPRESSION": "none", "heads": e.Heads[0] + ";" + e.Heads[1],
		AttrSize: "42", AttrSHA256: e.Object.SHA256} {
		if p.Attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, p.Attrs[k], v)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL": "http://general", "AWS_ENDPOINT_URL_S3": "http://s3", "AWS_DEFAULT_REGION": "eu-1",
		"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"}
	c := Config{Region: "us-2"}
	c.FillFromEnv(func(k string) string { return env[k] })
	if c.Endpoint != "http://s3" || c.Region != "us-2" || c.AccessKey != "id" || c.SecretKey != "secret" || c.SessionToken != "" {
		t.Errorf("%+v", c)
	}
}
