@ Test vectors for streamtrace-isa classify tests.
@ Assembled with: arm-none-eabi-as -march=armv5te -o vectors.o vectors.s
@ Words extracted with: arm-none-eabi-objdump -d vectors.o
@ Section .text starts at address 0 in the object file; offsets below are relative to it.
        .syntax unified
        .text
        .arm
        .global arm_vectors
arm_vectors:
a_start:
        b       a_fwd           @ 0x00  B AL forward
        bne     a_start         @ 0x04  Bcc negative
        bl      a_fwd           @ 0x08  BL
        bleq    a_start         @ 0x0c  BLcc negative
        blx     t_h0            @ 0x10  BLX imm, H=0
        blx     t_h1            @ 0x14  BLX imm, H=1
        blx     t_neg           @ 0x18  BLX imm, negative (target before this function)
        bx      lr              @ 0x1c
        bxne    lr              @ 0x20
        bx      r3              @ 0x24
        bxgt    r0              @ 0x28
        blx     r2              @ 0x2c
        blxeq   r12             @ 0x30
        blx     lr              @ 0x34  call through lr, not a return
        mov     pc, lr          @ 0x38
        movs    pc, lr          @ 0x3c
        movne   pc, lr          @ 0x40
        mov     pc, r4          @ 0x44
        mov     pc, lr, lsl #1  @ 0x48  shifted: not a plain return
        add     pc, pc, r0, lsl #2 @ 0x4c jump table
        addeq   pc, r1, #8      @ 0x50
        subs    pc, lr, #4      @ 0x54  IRQ return idiom: indirect per contract
        ldr     pc, [sp], #4    @ 0x58  pop pc
        ldrne   pc, [sp], #4    @ 0x5c
        ldr     pc, [r0]        @ 0x60
        ldr     pc, [pc, #-4]   @ 0x64
        ldrlt   pc, [r1, r2, lsl #2] @ 0x68
        ldr     pc, [sp, #4]    @ 0x6c  not post-indexed: indirect
        ldr     pc, [sp], #8    @ 0x70  post-indexed by 8: indirect
        pop     {r4, pc}        @ 0x74  ldmia sp!, {r4, pc}
        ldmfd   sp!, {r4-r11, pc} @ 0x78
        popne   {pc}            @ 0x7c  (single register pop: assembler may pick LDR)
        ldmia   r0, {r1, pc}    @ 0x80
        ldmdb   r11, {r4, r11, sp, pc} @ 0x84 APCS frame return: indirect per contract
        ldmfdeq sp!, {r0-r3, pc}^ @ 0x88  exception return form
        @ non-branches that look similar
        cmp     pc, r0          @ 0x8c
        tst     r0, r1          @ 0x90
        .word   0xe110f001      @ 0x94  TST r0, r1 with Rd field = 15 (legacy TSTP)
        mul     r0, r1, r2      @ 0x98
        .word   0xe1d0f0b0      @ 0x9c  LDRH pc, [r0] (unpredictable; as refuses it)
        pld     [r0]            @ 0xa0
        mrc     p15, 0, pc, c7, c10, 3 @ 0xa4 APSR_nzcv target
        ldr     r0, [sp], #4    @ 0xa8  pop of another register
        ldm     sp!, {r0-r3}    @ 0xac  ldm without pc
        stmdb   sp!, {r4, lr}   @ 0xb0  push
        svc     #0              @ 0xb4  SWI
        mrs     r0, cpsr        @ 0xb8
        .word   0xe16fff10      @ 0xbc  CLZ pc, r0 (unpredictable; as refuses it)
        qadd    r0, r1, r2      @ 0xc0
        mov     r0, lr          @ 0xc4
        .word   0xe5d0f000      @ 0xc8  LDRB pc, [r0] (unpredictable; as refuses it)
        ldrd    r0, r1, [sp]    @ 0xcc
        .word   0xe02f2190      @ 0xd0  MLA pc, r0, r1, r2 (unpredictable; as refuses it)
        cdp2    p1, 0, c0, c0, c0, 0 @ 0xd4
        str     pc, [sp, #-4]!  @ 0xd8
        msr     cpsr_f, #0xf0000000 @ 0xdc
        add     r0, pc, #8      @ 0xe0 reads pc only
        bkpt    #0              @ 0xe4
        strd    r0, r1, [sp]    @ 0xe8
        mov     pc, lr, asr #32 @ 0xec  shift field non-zero
a_fwd:
        nop                     @ 0xf0

        .thumb
        .global thumb_vectors
        .type   t_neg, %function
t_neg:  nop                     @ thumb nop
        .balign 4
thumb_vectors:
t_start:
t_h0:   beq     t_start         @ +0  Bcc negative (target = this insn)
t_h1:   bne     t_fwd           @ +2  Bcc forward
        bgt     t_start         @ +4
        b       t_start         @ +6  B negative
        b       t_fwd           @ +8  B forward
        bl      t_fwd           @ +10 BL pair (prefix, suffix)
        bl      a_start         @ +14 BL pair to arm code (converted by as? keep bl)
        blx     a_start         @ +18 BLX pair negative
        bx      lr              @ +22
        bx      r3              @ +24
        blx     r2              @ +26
        blx     lr              @ +28
        mov     pc, lr          @ +30
        mov     pc, r8          @ +32
        add     pc, r0          @ +34
        add     pc, lr          @ +36
        pop     {pc}            @ +38
        pop     {r4-r7, pc}     @ +40
        @ non-branches
        .hword  0x4587          @ +42  CMP pc, r0 (hi-register compare; as refuses pc)
        .hword  0x45f7          @ +44  CMP pc, lr (hi-reg compare, Rd field = 15)
        mov     r8, lr          @ +46
        pop     {r4}            @ +48
        push    {r4, lr}        @ +50
        svc     #0              @ +52
        .hword  0xde00          @ +54  undefined (1101 1110)
        add     r0, pc, #8      @ +56
        ldr     r0, [pc, #4]    @ +58
        adds    r0, r1, #0      @ +60
        nop                     @ +62
t_fwd:  nop                     @ +64

        .arm
        .balign 4
a_tail:
        blx     t_neg           @ 0x13c BLX imm, negative offset, H=0
        blx     t_h1            @ 0x140 BLX imm, negative offset, H=1
        ldmia   sp!, {pc}       @ 0x144
        ldr     pc, [sp], #-4   @ 0x148 post-indexed, subtract: indirect
        blmi    a_start         @ 0x14c
        bal     a_start         @ 0x150 explicit AL
        ldmdbne r0, {r4, pc}    @ 0x154
        .word   0xf12fff1e      @ 0x158 BX lr with cond=1111: unpredictable -> None
        .word   0xe1a0f10e      @ 0x15c MOV pc, lr, LSL #2
        .word   0xe3a0f000      @ 0x160 MOV pc, #0 (immediate)
