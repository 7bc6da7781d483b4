//! The module builder: globals (buffers, shared arrays, the scalar block, builtins), the entry
//! point, and helper functions specialised per array binding.

use super::func::{Fb, Slot};
use super::types::{contains_bool, host_layout, scalar_params_layout};
use crate::{CodegenError, Options, Target};
use naga::valid::Capabilities as NCaps;
use naga::{
    AddressSpace, Binding, BuiltIn, EntryPoint, Expression, GlobalVariable, Handle,
    MemoryDecorations, ResourceBinding, ShaderStage, Span, Statement, StorageAccess,
};
use spoc_ir::{Kernel, MemSpace, Type, VarId, VarKind};
use std::collections::HashMap;

/// A buffer parameter or shared array: a global variable holding an array.
pub(super) struct GlobalArr {
    pub handle: Handle<GlobalVariable>,
    /// The IR element type.
    pub elem: Type,
    pub space: MemSpace,
    /// Fixed length (shared arrays); `None` for buffers (runtime-sized).
    pub len: Option<u32>,
    /// True once an atomic targets it: its elements are then `atomic<T>`.
    pub atomic: bool,
    /// The IR name (for messages).
    pub name: String,
}

/// The thread-index builtins a kernel reads, copied into private globals at entry so helpers
/// can read them too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Builtin {
    LocalId,
    GroupId,
    NumGroups,
    GlobalId,
    SubgroupSize,
    SubgroupLane,
}

impl Builtin {
    fn naga(self) -> BuiltIn {
        match self {
            Builtin::LocalId => BuiltIn::LocalInvocationId,
            Builtin::GroupId => BuiltIn::WorkGroupId,
            Builtin::NumGroups => BuiltIn::NumWorkGroups,
            Builtin::GlobalId => BuiltIn::GlobalInvocationId,
            Builtin::SubgroupSize => BuiltIn::SubgroupSize,
            Builtin::SubgroupLane => BuiltIn::SubgroupInvocationId,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Builtin::LocalId => "spoc_thread_idx",
            Builtin::GroupId => "spoc_block_idx",
            Builtin::NumGroups => "spoc_grid_dim",
            Builtin::GlobalId => "spoc_global_id",
            Builtin::SubgroupSize => "spoc_warp_size",
            Builtin::SubgroupLane => "spoc_lane_id",
        }
    }
    fn is_vec3(self) -> bool {
        !matches!(self, Builtin::SubgroupSize | Builtin::SubgroupLane)
    }
}

/// The module under construction and everything shared by its functions.
pub(super) struct Gen<'k> {
    pub kernel: &'k Kernel,
    pub target: Target,
    pub block: [u32; 3],
    /// Capabilities the device and the target language allow.
    pub allowed: NCaps,
    /// Capabilities the device offers (whatever the language).
    pub device: NCaps,
    pub module: naga::Module,
    pub value_types: HashMap<Type, Handle<naga::Type>>,
    pub globals: Vec<GlobalArr>,
    /// The kernel's buffer parameters and shared arrays: their index in `globals`.
    pub kernel_globals: HashMap<VarId, usize>,
    /// The scalar block and, per kernel parameter, its member index.
    pub params_block: Option<(Handle<GlobalVariable>, HashMap<usize, u32>)>,
    builtins: Vec<(Builtin, Handle<GlobalVariable>)>,
    specs: HashMap<(String, Vec<Option<usize>>), Handle<naga::Function>>,
    spec_count: HashMap<String, u32>,
    /// Generated math routines (`powf`, `hypot`, …) by name and float type.
    pub routines: HashMap<(&'static str, spoc_ir::ScalarType), Handle<naga::Function>>,
    /// `(binding, writable)` of every resource, for the MSL binding map.
    pub bindings: Vec<(u32, bool)>,
    /// The placeholder length of the dynamic shared array (Vulkan).
    pub dynamic_shared: Option<u32>,
    /// True once a subgroup operation is used (WGSL then needs `enable subgroups;`).
    pub subgroups: bool,
    /// Checked mode: the fault record and the function that writes it.
    pub fault_record: Option<Handle<GlobalVariable>>,
    pub fault_fn: Option<Handle<naga::Function>>,
    /// Checked mode: the invocation's first fault (a private `array<u32, 7>` in the record's
    /// word order from `W_CODE`), written to the record once, when the kernel ends.
    pub pending_fault: Option<Handle<GlobalVariable>>,
    /// `Capabilities::float_controls_ignored`: float constants are to be hidden from the
    /// driver's optimiser.
    pub hide_float_constants: bool,
    /// `Capabilities::unfused_fma_f32`: `f32` `mul_add` is computed in `f64`.
    pub unfused_fma_f32: bool,
    /// The private global holding a zero the driver cannot know (set at the kernel's entry),
    /// once it is set: float literals are `bits ^ zero` reinterpreted ([`Fb::lit`]).
    pub opaque_zero: Option<Handle<GlobalVariable>>,
}

/// The result of [`build_module`].
pub(super) struct Built {
    pub module: naga::Module,
    pub bindings: Vec<(u32, bool)>,
    /// The placeholder length of the dynamic shared array (Vulkan), if there is one.
    pub dynamic_shared: Option<u32>,
    /// True if the module uses subgroup operations.
    pub subgroups: bool,
}

/// A length for the dynamic shared array that no integer constant of the kernel spells, so that
/// the SPIR-V constant holding it is the array's length (and `len()`) alone.
fn dynamic_placeholder(kernel: &Kernel) -> u32 {
    use spoc_ir::{Const, ExprKind};
    let mut used = std::collections::HashSet::new();
    for body in spoc_ir::visit::bodies(kernel) {
        spoc_ir::visit::for_each_expr(body, &mut |e| {
            if let ExprKind::Const(c) = e.kind {
                match c {
                    Const::I32(v) => drop(used.insert(v as u32 as u64)),
                    Const::U32(v) => drop(used.insert(v as u64)),
                    Const::I64(v) => drop(used.insert(v as u64)),
                    Const::U64(v) => drop(used.insert(v)),
                    _ => {}
                }
            }
        });
    }
    for s in &kernel.shared {
        if let Some(n) = s.len {
            used.insert(n as u64);
        }
    }
    // Primes below 2^16, far from the literals a kernel or this generator writes.
    [
        65_521u32, 65_519, 65_497, 65_479, 65_449, 65_447, 65_437, 65_423,
    ]
    .into_iter()
    .find(|c| !used.contains(&(*c as u64)))
    .unwrap_or(65_413)
}

/// Builds the naga module of `kernel` for `target`.
pub(super) fn build_module(
    target: Target,
    kernel: &Kernel,
    opts: &Options<'_>,
    block: [u32; 3],
    (allowed, device): (NCaps, NCaps),
) -> Result<Built, CodegenError> {
    let mut g = Gen {
        kernel,
        target,
        block,
        allowed,
        device,
        module: naga::Module::default(),
        value_types: HashMap::new(),
        globals: Vec::new(),
        kernel_globals: HashMap::new(),
        params_block: None,
        builtins: Vec::new(),
        specs: HashMap::new(),
        spec_count: HashMap::new(),
        routines: HashMap::new(),
        bindings: Vec::new(),
        dynamic_shared: None,
        subgroups: false,
        fault_record: None,
        fault_fn: None,
        pending_fault: None,
        hide_float_constants: opts.caps.float_controls_ignored && target == Target::Vulkan,
        unfused_fma_f32: opts.caps.unfused_fma_f32,
        opaque_zero: None,
    };
    g.declare_params()?;
    g.declare_shared()?;
    if opts.checked {
        if target != Target::Vulkan {
            return Err(CodegenError::FeatureNotSupported {
                backend: target.backend_name().into(),
                feature: "checked mode (only the SPIR-V of the naga targets has it)".into(),
            });
        }
        let buffers = kernel.params.iter().filter(|p| p.is_buffer()).count();
        g.declare_fault_record(super::buffer_binding(buffers))?;
    }
    let function = g.kernel_function()?;
    let module_bindings = std::mem::take(&mut g.bindings);
    let dynamic_shared = g.dynamic_shared;
    let subgroups = g.subgroups;
    let mut module = g.module;
    module.entry_points.push(EntryPoint {
        name: kernel.name.clone(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: block,
        workgroup_size_overrides: None,
        function,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    Ok(Built {
        module,
        bindings: module_bindings,
        dynamic_shared,
        subgroups,
    })
}

impl<'k> Gen<'k> {
    /// `Unsupported` unless `cap` is allowed.
    pub(super) fn require(
        &mut self,
        cap: NCaps,
        node: &str,
        capability: &str,
    ) -> Result<(), CodegenError> {
        if self.allowed.contains(cap) {
            if cap.intersects(NCaps::SUBGROUP | NCaps::SUBGROUP_BARRIER) {
                self.subgroups = true;
            }
            Ok(())
        } else if self.device.contains(cap) {
            let lang = match self.target {
                Target::Vulkan => "SPIR-V as naga writes it",
                Target::Metal => "MSL",
                Target::WebGpu => "standard WGSL",
                Target::Glsl => "GLSL as naga writes it",
                _ => "this target",
            };
            Err(self.unsupported(node, &format!("{capability}, which {lang} does not have")))
        } else {
            Err(self.unsupported(node, capability))
        }
    }

    /// A [`CodegenError::Unsupported`] for this kernel and target.
    pub(super) fn unsupported(&self, node: &str, capability: &str) -> CodegenError {
        CodegenError::Unsupported {
            kernel: self.kernel.name.clone(),
            target: self.target.backend_name(),
            node: node.to_string(),
            capability: capability.to_string(),
        }
    }

    /// A [`CodegenError::Backend`]: an IR shape this generator did not expect (a bug, or IR the
    /// validator should have rejected).
    pub(super) fn bug(&self, message: String) -> CodegenError {
        CodegenError::Backend {
            kernel: self.kernel.name.clone(),
            target: self.target.backend_name(),
            message,
        }
    }

    fn global(
        &mut self,
        name: &str,
        space: AddressSpace,
        binding: Option<u32>,
        ty: Handle<naga::Type>,
    ) -> Handle<GlobalVariable> {
        self.module.global_variables.append(
            GlobalVariable {
                name: Some(name.to_string()),
                space,
                binding: binding.map(|binding| ResourceBinding { group: 0, binding }),
                ty,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            },
            Span::UNDEFINED,
        )
    }

    /// The scalar block (binding 0) and one storage buffer per buffer parameter (binding 1 + j).
    fn declare_params(&mut self) -> Result<(), CodegenError> {
        let kernel = self.kernel;
        let (slots, _size) = scalar_params_layout(self.target, kernel)?;
        if !slots.is_empty() {
            let fields: Vec<(String, Type)> = slots
                .iter()
                .map(|s| {
                    let ty = &kernel.params[s.param].ty;
                    let ty = if *ty == Type::BOOL {
                        Type::U32
                    } else {
                        ty.clone()
                    };
                    (s.name.clone(), ty)
                })
                .collect();
            let ty = self.struct_ty(&format!("{}_params", kernel.name), &fields)?;
            let h = self.global(
                "spoc_params",
                AddressSpace::Storage {
                    access: StorageAccess::LOAD,
                },
                Some(super::SCALAR_PARAMS_BINDING),
                ty,
            );
            self.bindings.push((super::SCALAR_PARAMS_BINDING, false));
            let members = slots
                .iter()
                .enumerate()
                .map(|(m, s)| (s.param, m as u32))
                .collect();
            self.params_block = Some((h, members));
        }
        let mut j = 0;
        for p in &kernel.params {
            let Some((elem, _, _)) = p.ty.as_array() else {
                continue;
            };
            if contains_bool(kernel, elem) {
                return Err(self.unsupported(
                    &format!(
                        "buffer parameter `{}` of `{elem}`, which holds a `bool`",
                        p.name
                    ),
                    "a 1-byte `bool` in shader memory (use an integer element type)",
                ));
            }
            let base = self.value_ty(elem)?;
            let (stride, _) = host_layout(kernel, elem);
            let ty = self.array_ty(base, None, stride);
            let access = if p.mutable {
                StorageAccess::LOAD | StorageAccess::STORE
            } else {
                StorageAccess::LOAD
            };
            let binding = super::buffer_binding(j);
            j += 1;
            let h = self.global(&p.name, AddressSpace::Storage { access }, Some(binding), ty);
            self.bindings.push((binding, p.mutable));
            self.kernel_globals.insert(p.var, self.globals.len());
            self.globals.push(GlobalArr {
                handle: h,
                elem: elem.clone(),
                space: MemSpace::Global,
                len: None,
                atomic: false,
                name: p.name.clone(),
            });
        }
        Ok(())
    }

    /// One `Workgroup` global per shared array.
    fn declare_shared(&mut self) -> Result<(), CodegenError> {
        let kernel = self.kernel;
        for s in &kernel.shared {
            let name = kernel.var(s.var).name.clone();
            let len = match s.len {
                Some(len) => len,
                // Vulkan: a placeholder length, turned into specialization constant
                // `DYNAMIC_SHARED_SPEC_ID` after writing (`super::specialize_length`).
                None if self.target == Target::Vulkan => {
                    let len = dynamic_placeholder(kernel);
                    self.dynamic_shared = Some(len);
                    len
                }
                None => {
                    return Err(self.unsupported(
                        &format!(
                            "the shared array `{name}` sized at launch (dynamic shared memory)"
                        ),
                        "a shared-array length known when the module is generated (only \
                         Vulkan takes it as a specialization constant)",
                    ))
                }
            };
            let base = self.value_ty(&s.elem)?;
            let (stride, _) = host_layout(kernel, &s.elem);
            let ty = self.array_ty(base, Some(len), stride);
            let h = self.global(&name, AddressSpace::WorkGroup, None, ty);
            self.kernel_globals.insert(s.var, self.globals.len());
            self.globals.push(GlobalArr {
                handle: h,
                elem: s.elem.clone(),
                space: MemSpace::Shared,
                len: Some(len),
                atomic: false,
                name,
            });
        }
        Ok(())
    }

    /// Makes `globals[idx]` an array of `atomic<T>` (its plain loads and stores stay valid: naga
    /// loads and stores atomics too).
    pub(super) fn make_atomic(&mut self, idx: usize) -> Result<(), CodegenError> {
        if self.globals[idx].atomic {
            return Ok(());
        }
        let g = &self.globals[idx];
        let (elem, len) = (g.elem.clone(), g.len);
        let base = self.elem_ty(&elem, true)?;
        let (stride, _) = host_layout(self.kernel, &elem);
        let ty = self.array_ty(base, len, stride);
        let h = self.globals[idx].handle;
        self.module.global_variables.get_mut(h).ty = ty;
        self.globals[idx].atomic = true;
        Ok(())
    }

    /// The private global holding builtin `b` (created on first use).
    pub(super) fn builtin(&mut self, b: Builtin) -> Result<Handle<GlobalVariable>, CodegenError> {
        if let Some((_, h)) = self.builtins.iter().find(|(k, _)| *k == b) {
            return Ok(*h);
        }
        if b == Builtin::SubgroupLane && (self.block[1] > 1 || self.block[2] > 1) {
            return Err(self.unsupported(
                &format!("`lane_id()` in a block of {:?}", self.block),
                "a one-dimensional block (naga allows subgroup_invocation_id only then)",
            ));
        }
        if !b.is_vec3() {
            self.require(
                NCaps::SUBGROUP,
                "`warp_size()` / `lane_id()`",
                "subgroup operations (caps.subgroups)",
            )?;
        }
        let ty = if b.is_vec3() {
            self.uvec3_ty()
        } else {
            self.scalar_ty(spoc_ir::ScalarType::U32)?
        };
        let h = self.global(b.name(), AddressSpace::Private, None, ty);
        self.builtins.push((b, h));
        Ok(h)
    }

    /// The kernel's entry function: builtin arguments copied into their private globals, scalar
    /// parameters loaded from the block into locals, then the body.
    fn kernel_function(&mut self) -> Result<naga::Function, CodegenError> {
        let kernel = self.kernel;
        let mut slots = Vec::with_capacity(kernel.vars.len());
        for (i, d) in kernel.vars.iter().enumerate() {
            let id = VarId(i as u32);
            slots.push(match self.kernel_globals.get(&id) {
                Some(g) => Slot::Global(*g),
                None => Slot::Unset,
            });
            debug_assert!(d.kind != VarKind::Shared || matches!(slots[i], Slot::Global(_)));
        }
        let mut fb = Fb::new(self, &kernel.vars, slots);
        fb.set_opaque_zero();
        fb.clear_pending_fault()?;
        // Scalar parameters: locals initialised from the block.
        for (pi, p) in kernel.params.iter().enumerate() {
            if p.is_buffer() {
                continue;
            }
            let local = fb.declare_local(p.var)?;
            let (block, members) = fb.g.params_block.as_ref().ok_or_else(|| {
                fb.g.bug("scalar parameter without a parameter block".to_string())
            })?;
            let (block, member) = (*block, members[&pi]);
            let base = fb.global_ptr(block);
            let ptr = fb.emit(Expression::AccessIndex {
                base,
                index: member,
            });
            let mut v = fb.load(ptr);
            if p.ty == Type::BOOL {
                let zero = fb.lit(naga::Literal::U32(0));
                v = fb.emit(Expression::Binary {
                    op: naga::BinaryOperator::NotEqual,
                    left: v,
                    right: zero,
                });
            }
            let lp = fb.local_ptr(local);
            fb.store(lp, v);
        }
        fb.body(&kernel.body)?;
        if !fb.terminated() {
            fb.flush_pending_fault();
        }
        let mut function = fb.finish()?;
        function.name = Some(kernel.name.clone());
        // Builtins: one argument each, stored into the private global first thing.
        let mut prologue = naga::Block::new();
        let builtins = self.builtins.clone();
        for (k, (b, global)) in builtins.into_iter().enumerate() {
            let ty = self.module.global_variables[global].ty;
            function.arguments.push(naga::FunctionArgument {
                name: Some(format!("{}_in", b.name())),
                ty,
                binding: Some(Binding::BuiltIn(b.naga())),
            });
            let arg = function
                .expressions
                .append(Expression::FunctionArgument(k as u32), Span::UNDEFINED);
            let ptr = function
                .expressions
                .append(Expression::GlobalVariable(global), Span::UNDEFINED);
            prologue.push(
                Statement::Store {
                    pointer: ptr,
                    value: arg,
                },
                Span::UNDEFINED,
            );
        }
        let body = std::mem::take(&mut function.body);
        prologue.extend_block(body);
        function.body = prologue;
        Ok(function)
    }

    /// The naga function for helper `name` with its global/shared array parameters bound to
    /// `binds` (one entry per parameter: `Some(global index)` for such arrays, `None` for values),
    /// generated on first use.
    pub(super) fn specialize(
        &mut self,
        name: &str,
        binds: Vec<Option<usize>>,
    ) -> Result<Handle<naga::Function>, CodegenError> {
        let key = (name.to_string(), binds);
        if let Some(h) = self.specs.get(&key) {
            return Ok(*h);
        }
        let kernel = self.kernel;
        let f = kernel
            .function(name)
            .ok_or_else(|| self.bug(format!("no helper function `{name}`")))?;
        let binds = &key.1;
        let mut slots = vec![Slot::Unset; f.vars.len()];
        for (p, b) in f.params.iter().zip(binds) {
            if let Some(g) = b {
                slots[p.var.0 as usize] = Slot::Global(*g);
            }
        }
        let mut fb = Fb::new(self, &f.vars, slots);
        fb.func_index = kernel
            .functions
            .iter()
            .position(|h| h.name == name)
            .map_or(0, |k| k + 1);
        let mut arguments = Vec::new();
        for (p, b) in f.params.iter().zip(binds) {
            if b.is_some() {
                continue;
            }
            let ty = fb.g.value_ty(&p.ty)?;
            let k = arguments.len() as u32;
            arguments.push(naga::FunctionArgument {
                name: Some(p.name.clone()),
                ty,
                binding: None,
            });
            let local = fb.declare_local(p.var)?;
            let arg = fb.emit(Expression::FunctionArgument(k));
            let lp = fb.local_ptr(local);
            fb.store(lp, arg);
        }
        fb.body(&f.body)?;
        let mut function = fb.finish()?;
        function.arguments = arguments;
        if f.ret != Type::Unit {
            let ty = self.value_ty(&f.ret)?;
            function.result = Some(naga::FunctionResult { ty, binding: None });
            // The validator guarantees every path returns; naga wants a terminator anyway.
            if !matches!(function.body.last(), Some(Statement::Return { .. })) {
                let zero = function
                    .expressions
                    .append(Expression::ZeroValue(ty), Span::UNDEFINED);
                function
                    .body
                    .push(Statement::Return { value: Some(zero) }, Span::UNDEFINED);
            }
        }
        let n = self.spec_count.entry(name.to_string()).or_insert(0);
        let ident = crate::names::function_ident(name);
        function.name = Some(if *n == 0 {
            ident
        } else {
            format!("{ident}_{n}")
        });
        *n += 1;
        let h = self.module.functions.append(function, Span::UNDEFINED);
        self.specs.insert(key, h);
        Ok(h)
    }
}
