//! The Vulkan backend's environment variables with values they do not take: the backend is
//! unavailable and says which variable, instead of reading the typo as something else (the
//! rule of `spoc_runtime::env`). Its own binary: the variables are process-wide and read
//! when the devices are first enumerated. The check comes before the Vulkan loader is
//! loaded, so this runs on any machine.
#![cfg(feature = "vulkan")]

use spoc_runtime::vulkan::VulkanBackend;

#[test]
fn bad_values_make_the_backend_unavailable_naming_the_variable() {
    std::env::set_var("SPOC_VULKAN_BATCH_CAP", "0");
    let why = VulkanBackend::new()
        .unavailable_reason()
        .expect("a batch cap of 0 is refused");
    assert!(
        why.contains("SPOC_VULKAN_BATCH_CAP") && why.contains("1..=4096"),
        "{why}"
    );
    std::env::set_var("SPOC_VULKAN_BATCH_CAP", "64");
    std::env::set_var("SPOC_VULKAN_NO_TIMELINE", "of");
    let why = VulkanBackend::new()
        .unavailable_reason()
        .expect("a switch that is neither on nor off is refused");
    assert!(why.contains("SPOC_VULKAN_NO_TIMELINE"), "{why}");
    // Good values pass the check: whatever the machine has decides the rest.
    std::env::set_var("SPOC_VULKAN_NO_TIMELINE", "off");
    std::env::set_var("SPOC_VULKAN_FORCE_STAGING", " No ");
    if let Some(why) = VulkanBackend::new().unavailable_reason() {
        assert!(!why.contains("SPOC_VULKAN"), "{why}");
        println!("skipped the last part: Vulkan is unavailable here ({why})");
    }
}
