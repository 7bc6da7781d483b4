//! `#[derive(Record)]`: the field table and IR definitions it generates, and record buffers.

use spoc::prelude::*;
use spoc::{FieldType, TypeTag};

#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
pub struct Body {
    pub pos: Vec3,
    pub mass: f64,
    pub id: u32,
}

#[test]
fn field_table_lists_fields_in_order_with_their_types() {
    assert_eq!(Body::NAME, "Body");
    let names: Vec<_> = Body::FIELDS.iter().map(|f| f.name).collect();
    assert_eq!(names, ["pos", "mass", "id"]);
    assert_eq!(Body::FIELDS[0].tag, TypeTag::Record("Vec3"));
    assert_eq!(Body::FIELDS[1].tag, TypeTag::Scalar(spoc::ir::ScalarType::F64));
    const MASS: Option<TypeTag> = spoc::field_tag::<Body>("mass");
    assert_eq!(MASS, Some(TypeTag::Scalar(spoc::ir::ScalarType::F64)));
    assert_eq!(spoc::field_tag::<Body>("velocity"), None);
}

#[test]
fn record_defs_put_nested_records_first_once() {
    let mut defs = Vec::new();
    Body::record_defs(&mut defs);
    Vec3::record_defs(&mut defs);
    let names: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["Vec3", "Body"]);
    assert_eq!(defs[1].fields[0].ty, spoc::ir::Type::Record("Vec3".into()));
    assert_eq!(defs[0].fields.len(), 3);
}

#[test]
fn record_buffers_round_trip_through_a_device() -> spoc::Result<()> {
    let dev = spoc::init_device(Some("Native"))?;
    let host: Vec<Body> = (0..10)
        .map(|i| Body {
            pos: Vec3 { x: i as f32, y: 2.0, z: -1.0 },
            mass: 0.5 * i as f64,
            id: i,
        })
        .collect();
    let buf = dev.upload(&host)?;
    assert_eq!(buf.to_vec()?, host);
    assert_eq!(std::mem::size_of::<Body>(), 32);
    Ok(())
}
