@ Encodings used by sim/tests/thumb_*.rs. Assemble and list with
@   arm-none-eabi-as -march=armv5te -mthumb thumb_formats.s -o /tmp/t.o
@   arm-none-eabi-ld -Ttext=0x8000 /tmp/t.o -o /tmp/t.elf
@   arm-none-eabi-objdump -d /tmp/t.elf
@ The listing is kept next to this file as thumb_formats.lst; the tests copy the
@ halfwords from it (each use cites the mnemonic).
        .syntax unified
        .thumb
        .text
        .global _start
_start:
@ ---- format 1: shift by immediate
        lsls    r0, r1, #1
        lsls    r0, r1, #0
        lsrs    r0, r1, #32
        asrs    r0, r1, #32
        asrs    r2, r3, #4
        lsrs    r2, r3, #1
@ ---- format 2: add/sub register and imm3
        adds    r0, r1, r2
        subs    r0, r1, r2
        adds    r3, r4, #7
        subs    r3, r4, #1
@ ---- format 3: mov/cmp/add/sub imm8
        movs    r5, #0
        movs    r5, #255
        cmp     r6, #128
        adds    r7, #1
        subs    r7, #1
@ ---- format 4: ALU
        ands    r0, r1
        eors    r0, r1
        lsls    r0, r1
        lsrs    r0, r1
        asrs    r0, r1
        adcs    r0, r1
        sbcs    r0, r1
        rors    r0, r1
        tst     r0, r1
        negs    r0, r1
        cmp     r0, r1
        cmn     r0, r1
        orrs    r0, r1
        muls    r0, r1
        bics    r0, r1
        mvns    r0, r1
@ ---- format 5: hi register operations and BX/BLX
        add     r8, r1
        add     r0, pc
        add     sp, r2
        cmp     r8, r9
        cmp     r0, r10
        mov     r9, r2
        mov     r3, sp
        mov     pc, lr
        add     pc, r1
        mov     pc, r3
        bx      r3
        bx      lr
        bx      pc
        blx     r4
        blx     lr
@ ---- format 6: PC-relative load
        ldr     r0, [pc, #4]
        ldr     r1, [pc, #0]
@ ---- formats 7/8: register offset
        str     r0, [r1, r2]
        strh    r0, [r1, r2]
        strb    r0, [r1, r2]
        ldrsb   r0, [r1, r2]
        ldr     r0, [r1, r2]
        ldrh    r0, [r1, r2]
        ldrb    r0, [r1, r2]
        ldrsh   r0, [r1, r2]
@ ---- format 9/10: immediate offset
        str     r0, [r1, #4]
        ldr     r0, [r1, #124]
        strb    r0, [r1, #31]
        ldrb    r0, [r1, #1]
        strh    r0, [r1, #2]
        ldrh    r0, [r1, #62]
        ldr     r0, [r1, #0]
@ ---- format 11: SP-relative
        str     r2, [sp, #8]
        ldr     r3, [sp, #1020]
@ ---- format 12: address generation
        add     r0, pc, #8
        add     r1, sp, #1020
@ ---- format 13: SP adjust
        add     sp, #508
        sub     sp, #16
@ ---- format 14: push/pop
        push    {r0, r1, r4, lr}
        push    {r7}
        pop     {r0, r1, r4, pc}
        pop     {r2, r3}
        pop     {pc}
@ ---- format 15: multiple load/store
        stmia   r0!, {r1, r2, r3}
        ldmia   r0!, {r1, r2}
        ldmia   r0, {r0, r1}
        ldmia   r1!, {r0, r2}
        stmia   r1!, {r1, r2}
        stmia   r1!, {r0, r1}
@ ---- format 16/17: conditional branch, SWI, undefined, BKPT
        beq     _start
        bne     fwd
fwd:    bgt     fwd
        svc     #0xab
        svc     #0x12
        udf     #0
        bkpt    #0x01
@ ---- format 18: unconditional branch
        b       _start
        b       next
next:
@ ---- format 19: BL / BLX pairs
        bl      _start
        blx     armfunc
        bl      far_fwd
        .balign 4
        .arm
armfunc:
        bx      lr
        .thumb
        .space  0x1000
far_fwd:
        bx      lr
