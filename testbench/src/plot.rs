//! The figure Homa's papers use: p99 (and p50) slowdown against message size,
//! log-scale x, as an SVG.

use std::path::Path;

use plotters::prelude::*;

use crate::report::Report;

/// The plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("nothing to plot: no completed RPCs in the measured interval")]
    Empty,
    #[error("drawing {path}: {message}")]
    Draw { path: String, message: String },
}

/// Draws p99 and p50 slowdown per size bucket (at each bucket's median size).
pub fn slowdown_svg(report: &Report, path: &Path) -> Result<(), PlotError> {
    let pts: Vec<_> = report
        .plot_buckets
        .iter()
        .filter(|b| b.count > 0)
        .map(|b| (b.median_bytes.max(1) as f64, b.p50, b.p99))
        .collect();
    if pts.is_empty() {
        return Err(PlotError::Empty);
    }
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let x_min = pts.iter().map(|p| p.0).fold(f64::MAX, f64::min) / 1.5;
    let x_max = pts.iter().map(|p| p.0).fold(0.0, f64::max) * 1.5;
    let y_max = pts.iter().map(|p| p.2).fold(1.0, f64::max) * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let caption = format!(
        "{} at load {:.2}, {} hosts, {} Gb/s: slowdown by message size",
        report.workload.to_uppercase(),
        report.load,
        report.hosts,
        report.link_gbps
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((x_min..x_max).log_scale(), 0.0..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("message size (bytes, request = response)")
        .y_desc("slowdown")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.2)), &RED))
        .map_err(|e| err(&e))?
        .label("p99")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart
        .draw_series(pts.iter().map(|p| Circle::new((p.0, p.2), 3, RED.filled())))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), &BLUE))
        .map_err(|e| err(&e))?
        .label("p50")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .draw_series(
            pts.iter()
                .map(|p| Circle::new((p.0, p.1), 3, BLUE.filled())),
        )
        .map_err(|e| err(&e))?;
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
