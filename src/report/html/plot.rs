//! Plots as inline SVG strings, drawn by plotters' SVG backend (no hand-written path
//! arithmetic). Long series are decimated with min/max per bucket so single spikes survive.

use plotters::prelude::*;

/// At most this many buckets along x: each keeps its smallest and largest y, so a line has at
/// most twice as many points.
pub const BUCKETS: usize = 2_000;

/// One line of a chart: `(x, y)` points in x order (already decimated).
pub struct Line {
    pub name: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

/// A marker shape.
#[derive(Clone, Copy)]
pub enum Shape {
    Circle,
    Triangle,
    Cross,
}

/// Points drawn as markers, with a legend entry.
pub struct Marks {
    pub name: String,
    pub color: RGBColor,
    pub shape: Shape,
    pub points: Vec<(f64, f64)>,
}

/// A vertical rule with a label at the top (first anomaly, birth, first divergence).
pub struct Rule {
    pub x: f64,
    pub label: String,
    pub color: RGBColor,
}

/// A horizontal threshold line with a legend entry.
pub struct Threshold {
    pub y: f64,
    pub name: String,
    pub color: RGBColor,
}

/// Everything one chart shows. With `log_y`, every y is a base-10 logarithm (callers take
/// `log10` of positive values) and axis labels show `10^y`.
pub struct Chart {
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    pub x_max: f64,
    pub y_range: (f64, f64),
    pub log_y: bool,
    pub lines: Vec<Line>,
    pub marks: Vec<Marks>,
    pub rules: Vec<Rule>,
    pub thresholds: Vec<Threshold>,
}

pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 300;

/// Min/max decimation: `points` are `(x, y)` with x in `0..=x_max`; at most [`BUCKETS`] buckets,
/// each giving its minimum and its maximum (in x order) — the envelope of the series.
pub fn decimate(points: impl IntoIterator<Item = (f64, f64)>, x_max: f64) -> Vec<(f64, f64)> {
    let width = (x_max / BUCKETS as f64).max(1.0);
    let mut out: Vec<(f64, f64)> = Vec::new();
    // The current bucket: its number, its lowest and its highest point.
    type Bucket = (u64, (f64, f64), (f64, f64));
    let mut bucket: Option<Bucket> = None;
    let flush = |out: &mut Vec<(f64, f64)>, lo: (f64, f64), hi: (f64, f64)| {
        if lo == hi {
            out.push(lo);
        } else if lo.0 <= hi.0 {
            out.extend([lo, hi]);
        } else {
            out.extend([hi, lo]);
        }
    };
    for (x, y) in points {
        if !x.is_finite() || !y.is_finite() {
            continue;
        }
        let b = (x / width) as u64;
        match &mut bucket {
            Some((cur, lo, hi)) if *cur == b => {
                if y < lo.1 {
                    *lo = (x, y);
                }
                if y > hi.1 {
                    *hi = (x, y);
                }
            }
            _ => {
                if let Some((_, lo, hi)) = bucket.take() {
                    flush(&mut out, lo, hi);
                }
                bucket = Some((b, (x, y), (x, y)));
            }
        }
    }
    if let Some((_, lo, hi)) = bucket {
        flush(&mut out, lo, hi);
    }
    out
}

/// Keeps at most one marker per bucket (the first), so a million anomalies draw a few thousand.
pub fn thin(points: impl IntoIterator<Item = (f64, f64)>, x_max: f64) -> Vec<(f64, f64)> {
    let width = (x_max / BUCKETS as f64).max(1.0);
    let mut last = None;
    points
        .into_iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .filter(|(x, _)| {
            let b = (x / width) as u64;
            let keep = last != Some(b);
            last = Some(b);
            keep
        })
        .collect()
}

/// Draws the chart; returns the `<svg>` element.
pub fn svg(chart: &Chart) -> Result<String, String> {
    let mut out = String::new();
    draw(chart, &mut out).map_err(|e| format!("plot {:?}: {e}", chart.caption))?;
    Ok(out)
}

fn draw(c: &Chart, out: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (y0, y1) = if c.y_range.0 < c.y_range.1 {
        c.y_range
    } else {
        (c.y_range.0 - 1.0, c.y_range.0 + 1.0)
    };
    let x_max = c.x_max.max(1.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..x_max + 0.5, y0..y1)?;
    let log = c.log_y;
    // On a log axis only whole powers of ten are labelled (1, 10, 100 — not 1.995262).
    let y_fmt = move |v: &f64| match log {
        true if (v - v.round()).abs() < 1e-6 => super::short(10f64.powf(v.round())),
        true => String::new(),
        false => super::short(*v),
    };
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_desc(c.y_label.as_str())
        .y_label_formatter(&y_fmt)
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-6 {
                // `+ 0.0` turns -0 into 0.
                format!("{:.0}", v.round() + 0.0)
            } else {
                String::new()
            }
        })
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for t in &c.thresholds {
        let color = t.color;
        chart
            .draw_series(LineSeries::new(
                [(-0.5, t.y), (x_max + 0.5, t.y)],
                color.stroke_width(1),
            ))?
            .label(t.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
    }
    for l in &c.lines {
        let color = l.color;
        chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(1),
            ))?
            .label(l.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
    }
    for m in &c.marks {
        let color = m.color;
        let style = color.filled();
        let series = chart.draw_series(m.points.iter().map(|&p| -> DynElement<_, _> {
            match m.shape {
                Shape::Circle => Circle::new(p, 4, style).into_dyn(),
                Shape::Triangle => TriangleMarker::new(p, 5, style).into_dyn(),
                Shape::Cross => Cross::new(p, 4, color.stroke_width(2)).into_dyn(),
            }
        }))?;
        let shape = m.shape;
        series
            .label(m.name.as_str())
            .legend(move |(x, y)| -> DynElement<_, _> {
                let p = (x + 8, y);
                match shape {
                    Shape::Circle => Circle::new(p, 4, style).into_dyn(),
                    Shape::Triangle => TriangleMarker::new(p, 5, style).into_dyn(),
                    Shape::Cross => Cross::new(p, 4, color.stroke_width(2)).into_dyn(),
                }
            });
    }
    for (i, r) in c.rules.iter().enumerate() {
        chart.draw_series(LineSeries::new(
            [(r.x, y0), (r.x, y1)],
            r.color.stroke_width(2),
        ))?;
        // Labels of close rules are stacked so they stay readable.
        let y = y1 - (y1 - y0) * (0.06 + 0.09 * i as f64);
        chart.draw_series(std::iter::once(Text::new(
            r.label.clone(),
            (r.x, y),
            ("sans-serif", 13).into_font().color(&r.color),
        )))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_a_single_spike_and_bounds_the_points() {
        let n = 1_000_000usize;
        let spike = 777_777usize;
        let pts = (0..n).map(|i| (i as f64, if i == spike { 1e30 } else { 1.0 }));
        let d = decimate(pts, n as f64);
        assert!(d.len() <= 2 * BUCKETS + 2, "{}", d.len());
        assert!(d.iter().any(|&(x, y)| x == spike as f64 && y == 1e30));
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn thinning_keeps_one_marker_per_bucket() {
        let t = thin((0..100_000).map(|i| (i as f64, 0.0)), 100_000.0);
        assert!(t.len() <= BUCKETS + 1, "{}", t.len());
        assert_eq!(t[0], (0.0, 0.0));
    }

    #[test]
    fn labels_are_escaped_in_the_svg() {
        let svg = svg(&Chart {
            caption: "c".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_max: 3.0,
            y_range: (0.0, 1.0),
            log_y: false,
            lines: vec![],
            marks: vec![],
            rules: vec![Rule {
                x: 1.0,
                label: "<script>alert(1)</script>".into(),
                color: RED,
            }],
            thresholds: vec![],
        })
        .unwrap();
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        assert!(!svg.contains("<script>"));
    }
}
