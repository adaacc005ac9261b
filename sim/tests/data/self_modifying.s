@ Self-modifying code for the predecoded-instruction cache of the core model
@ (sim/tests/self_modifying.rs). A static Linux program: ARM code stores an instruction into
@ its own text and calls it, three times with a different instruction; Thumb code does the
@ same with halfwords; then a Thumb BL pair runs, its prefix is overwritten by a MOV that sets
@ lr, and it runs again (the BL suffix's branch class depends on the halfword before it:
@ direct after a prefix, indirect otherwise). The patched instructions add to r5, which is
@ the exit status: 1 + 2 + 4 (ARM) + 8 + 16 + 32 (Thumb) + 64 + 64 (the pair, twice) = 191.
@ A model that ran stale decodings would add 1 + 1 + 1 and 8 + 8 + 8.
@
@ Build (binutils; -N makes the text writable):
@   arm-linux-gnueabi-as -march=armv5te -o /tmp/smc.o self_modifying.s
@   arm-linux-gnueabi-ld -N -static -e _start -o self_modifying.elf /tmp/smc.o

    .syntax unified
    .arch armv5te

    @ The GNU ABI tag (Linux 3.2.0): the model runs the program in Linux user mode.
    .section .note.ABI-tag, "a", %note
    .align 2
    .long 4, 16, 1
    .asciz "GNU"
    .long 0, 3, 2, 0

    .text
    .arm
    .global _start
_start:
    mov r5, #0
    @ ARM: store the next word of arm_words at arm_site, call it.
    adr r6, arm_words
    adr r4, arm_site
    mov r8, #3
1:  ldr r1, [r6], #4
    str r1, [r4]
    bl arm_site
    subs r8, r8, #1
    bne 1b
    @ Thumb: store the next halfword of thumb_words at thumb_site, call it.
    adr r6, thumb_words
    ldr r4, =thumb_site
    mov r8, #3
2:  ldrh r1, [r6], #2
    strh r1, [r4]
    add r2, r4, #1
    blx r2
    subs r8, r8, #1
    bne 2b
    @ The BL pair as assembled, then with its prefix replaced by `mov lr, r3`, where r3 is
    @ the lr the prefix sets (so the suffix reaches the same target).
    ldr r2, =pair + 1
    blx r2
    ldr r4, =pair_prefix
    ldrh r1, mov_lr_r3
    strh r1, [r4]
    add r3, r4, #4
    ldr r2, =pair + 1
    blx r2
    @ exit(r5)
    mov r0, r5
    mov r7, #1
    svc #0

arm_site:
    nop
    bx lr

arm_words:
    add r5, r5, #1
    add r5, r5, #2
    add r5, r5, #4

    .ltorg

    .thumb
thumb_site:
    nop
    bx lr

thumb_words:
    adds r5, #8
    adds r5, #16
    adds r5, #32

mov_lr_r3:
    mov lr, r3

    .align 2
    .thumb_func
pair:
    push {lr}
pair_prefix:
    bl pair_target
    pop {pc}

pair_target:
    adds r5, #64
    bx lr
