//! Unit tests of the scene builder.

use super::math;

#[test]
fn perspective_depth_convention() {
    let p = math::perspective(1.0, 1.0, 0.5, 10.0);
    let near = math::transform(&p, [0.0, 0.0, -0.5, 1.0]);
    let far = math::transform(&p, [0.0, 0.0, -10.0, 1.0]);
    assert!((near[2] / near[3] + 1.0).abs() < 1e-6);
    assert!((far[2] / far[3]).abs() < 1e-6);
}
