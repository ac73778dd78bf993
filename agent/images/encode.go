package images

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registers GIF: the first frame is decoded
	_ "image/jpeg"
	"image/png"
)

// Bounds of one image. Defaults are named so the documentation and the
// tests read the same figures.
const (
	// DefaultMaxBytes is the most bytes downloaded of one image.
	DefaultMaxBytes = 5 << 20
	// DefaultMaxPixels is the most pixels an image may declare before it
	// is decoded: a small file can declare a huge canvas (a decompression
	// bomb), so the header is read first.
	DefaultMaxPixels = 40_000_000
	// DefaultMaxEdge is the longest edge sent to a model, in pixels;
	// larger images are scaled down. The providers scale down past about
	// this size themselves, so more would cost tokens for nothing.
	DefaultMaxEdge = 1568
)

// errNotImage is data no registered decoder reads.
var errNotImage = errors.New("not a PNG, JPEG or GIF image")

// Reencode decodes data (PNG, JPEG, or a GIF's first frame) and encodes
// it again as a PNG of at most maxEdge pixels on its longest side. Only
// decoded pixels survive: metadata, trailing bytes and any payload
// hidden beside the picture are gone. An image declaring more than
// maxPixels pixels is refused before it is decoded.
func Reencode(data []byte, maxPixels, maxEdge int) (out []byte, w, h int, err error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, errNotImage
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, 0, 0, fmt.Errorf("the image declares an empty canvas (%dx%d)", cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > int64(maxPixels) {
		return nil, 0, 0, fmt.Errorf("the image declares %dx%d pixels, over the cap of %d", cfg.Width, cfg.Height, maxPixels)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("the image does not decode: %v", err)
	}
	img = scaleDown(img, maxEdge)
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		return nil, 0, 0, fmt.Errorf("encode png: %w", err)
	}
	b := img.Bounds()
	return buf.Bytes(), b.Dx(), b.Dy(), nil
}

// scaleDown returns img with its longest edge at most maxEdge, averaging
// the source pixels each target pixel covers (a box filter: plain, and
// good enough for screenshots).
func scaleDown(img image.Image, maxEdge int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if maxEdge <= 0 || (w <= maxEdge && h <= maxEdge) {
		return img
	}
	nw, nh := maxEdge, max(1, h*maxEdge/w)
	if h > w {
		nw, nh = max(1, w*maxEdge/h), maxEdge
	}
	out := image.NewNRGBA(image.Rect(0, 0, nw, nh))
	for y := range nh {
		y0, y1 := b.Min.Y+y*h/nh, b.Min.Y+max((y+1)*h/nh, y*h/nh+1)
		for x := range nw {
			x0, x1 := b.Min.X+x*w/nw, b.Min.X+max((x+1)*w/nw, x*w/nw+1)
			out.Pix[out.PixOffset(x, y)+0], out.Pix[out.PixOffset(x, y)+1],
				out.Pix[out.PixOffset(x, y)+2], out.Pix[out.PixOffset(x, y)+3] = average(img, x0, y0, x1, y1)
		}
	}
	return out
}

// average is the mean colour of img over [x0,x1)×[y0,y1), not
// premultiplied.
func average(img image.Image, x0, y0, x1, y1 int) (r, g, b, a uint8) {
	var sr, sg, sb, sa, n uint64
	// RGBA64At, which every decoded image here has, returns a value:
	// At boxes each pixel's colour, one allocation a pixel (40 million
	// for an image at the pixel cap).
	fast, _ := img.(image.RGBA64Image)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			var cr, cg, cb, ca uint32
			if fast != nil {
				c := fast.RGBA64At(x, y)
				cr, cg, cb, ca = uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A)
			} else {
				cr, cg, cb, ca = img.At(x, y).RGBA()
			}
			sr, sg, sb, sa, n = sr+uint64(cr), sg+uint64(cg), sb+uint64(cb), sa+uint64(ca), n+1
		}
	}
	if sa == 0 {
		return 0, 0, 0, 0
	}
	// RGBA() is premultiplied; dividing by the summed alpha undoes it.
	return uint8(sr * 255 / sa), uint8(sg * 255 / sa), uint8(sb * 255 / sa), uint8(sa / n >> 8)
}
