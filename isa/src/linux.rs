//! The Linux user-space ABI facts that both the core model and the decoder need: the
//! kernel's user helper page (`kuser` helpers, Documentation/arm/kernel_user_helpers in
//! Linux) that every ARM Linux process can call at fixed addresses, and which a trace of a
//! Linux program therefore runs through (docs/linux.md).
//!
//! The page holds the helpers of a uniprocessor pre-ARMv6 kernel, the kind that runs
//! ARMv5TE user code: plain loads and stores (no exclusive accesses), `bx lr` returns.

/// Base of the helper page.
pub const KUSER_PAGE: u32 = 0xffff_0000;
/// `__kuser_cmpxchg64`: r0 = &old, r1 = &new, r2 = ptr; r0 = 0 and C set when stored.
pub const KUSER_CMPXCHG64: u32 = 0xffff_0f60;
/// `__kuser_memory_barrier`.
pub const KUSER_MEMORY_BARRIER: u32 = 0xffff_0fa0;
/// `__kuser_cmpxchg`: r0 = old, r1 = new, r2 = ptr; r0 = 0 and C set when stored.
pub const KUSER_CMPXCHG: u32 = 0xffff_0fc0;
/// `__kuser_get_tls`: r0 = the thread pointer set by the ARM private `set_tls` call.
pub const KUSER_GET_TLS: u32 = 0xffff_0fe0;
/// Where a pre-ARMv6 kernel keeps the thread pointer that `__kuser_get_tls` loads.
pub const KUSER_TLS_WORD: u32 = 0xffff_0ff0;
/// `__kuser_helper_version`: the number of 32-byte helper slots (5 with cmpxchg64).
pub const KUSER_HELPER_VERSION: u32 = 0xffff_0ffc;

const BX_LR: u32 = 0xe12f_ff1e;

/// The helpers' code, by address.
const HELPERS: &[(u32, &[u32])] = &[
    (
        KUSER_CMPXCHG64,
        &[
            0xe92d_4070, // stmfd   sp!, {r4, r5, r6, lr}
            0xe890_0030, // ldmia   r0, {r4, r5}        old value
            0xe891_4040, // ldmia   r1, {r6, lr}        new value
            0xe892_0003, // ldmia   r2, {r0, r1}        current value
            0xe030_3004, // eors    r3, r0, r4
            0x0031_3005, // eorseq  r3, r1, r5
            0x0882_4040, // stmiaeq r2, {r6, lr}        store if equal
            0xe273_0000, // rsbs    r0, r3, #0          r0 = 0 and C = 1 when stored
            0xe8bd_8070, // ldmfd   sp!, {r4, r5, r6, pc}
        ],
    ),
    (KUSER_MEMORY_BARRIER, &[BX_LR]),
    (
        KUSER_CMPXCHG,
        &[
            0xe592_3000, // ldr     r3, [r2]
            0xe053_3000, // subs    r3, r3, r0
            0x0582_1000, // streq   r1, [r2]
            0xe273_0000, // rsbs    r0, r3, #0
            BX_LR,
        ],
    ),
    (
        KUSER_GET_TLS,
        &[
            0xe59f_0008, // ldr     r0, [pc, #8]        the word at KUSER_TLS_WORD
            BX_LR,
        ],
    ),
    (KUSER_HELPER_VERSION, &[5]),
];

/// The 4 KiB helper page as a process starts with it (thread pointer 0).
pub fn kuser_page() -> Vec<u8> {
    let mut page = vec![0u8; 4096];
    for &(addr, words) in HELPERS {
        for (i, w) in words.iter().enumerate() {
            let at = (addr - KUSER_PAGE) as usize + 4 * i;
            page[at..at + 4].copy_from_slice(&w.to_le_bytes());
        }
    }
    page
}

/// Is `addr` on the helper page?
#[inline]
pub fn is_kuser(addr: u32) -> bool {
    addr >= KUSER_PAGE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::classify_arm;
    use crate::BranchClass;

    #[test]
    fn helpers_sit_at_their_abi_addresses_and_return_through_lr() {
        let page = kuser_page();
        let word = |a: u32| {
            let o = (a - KUSER_PAGE) as usize;
            u32::from_le_bytes(page[o..o + 4].try_into().unwrap())
        };
        assert_eq!(word(KUSER_HELPER_VERSION), 5);
        assert_eq!(word(KUSER_MEMORY_BARRIER), BX_LR);
        assert_eq!(word(KUSER_GET_TLS + 4), BX_LR);
        assert_eq!(word(KUSER_CMPXCHG + 16), BX_LR);
        assert_eq!(word(KUSER_TLS_WORD), 0);
        // The returns are what the classifier calls returns, so the trace sees them as such.
        assert_eq!(classify_arm(BX_LR, KUSER_GET_TLS + 4).class, BranchClass::Return);
        assert_eq!(classify_arm(word(KUSER_CMPXCHG64 + 32), KUSER_CMPXCHG64 + 32).class, BranchClass::Return);
        // get_tls's load reaches the TLS word: pc + 8 + 8.
        assert_eq!(KUSER_GET_TLS + 8 + (word(KUSER_GET_TLS) & 0xfff), KUSER_TLS_WORD);
    }
}
