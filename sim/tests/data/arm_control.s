@ Instructions used by sim/tests/arm_control.rs (one per line, each at its own address).
@ Assembled with: arm-none-eabi-as -mcpu=xscale (ARMv5TE + XScale); encodings read back with
@ arm-none-eabi-objdump -d. Lines with .inst are encodings gas refuses (UNPREDICTABLE forms),
@ hand-derived from the valid form named in the comment.
	.arm
	.syntax unified
	b .+16
	bl .+0x100
	nop
	b .-8
	blx .+10
	blx .+0x200
	bx r0
	bx lr
	blx r3
	blx lr
	bxeq r0
	svc 0x123456
	svc 0x10
	bkpt 0x12
	svceq 0x123456
	.inst 0xe7f000f0 @ udf #0 (the permanently undefined space, bits[27:25] = 011, bit 4 = 1)
	cdp p5, 0, c0, c1, c2, 0
	ldc p1, c0, [r0]
	stc p6, c1, [r0, #8]!
	mcr p14, 0, r0, c1, c0, 0
	mrc p7, 0, r0, c1, c0, 0
	.inst 0xfe000000 @ cdp2 p0, 0, c0, c0, c0, 0
	.inst 0xe1a00f90 @ multiply space with bits[24:21] = 1101: unallocated
	.inst 0xe3000000 @ movw r0, #0 (ARMv6T2; undefined on v5)
	.inst 0xe1900f9f @ ldrex r0, [r0] (ARMv6)
	.inst 0xe12fff20 @ bxj r0 (no Jazelle)
	mrc p15, 0, r0, c0, c0, 0
	mrc p15, 0, r0, c0, c0, 1
	mrc p15, 0, r0, c1, c0, 0
	mcr p15, 0, r1, c1, c0, 0
	mrc p15, 0, r0, c2, c0, 0
	mcr p15, 0, r1, c7, c7, 0
	mrc p15, 0, APSR_nzcv, c1, c0, 0
	mov pc, lr
	movne pc, r2
	add pc, r2, #8
	ldr pc, [sp], #4
	ldr pc, [r2, #-8]
	ldmia r2, {r3, pc}
	pop {r4, pc}
	blx r2
	blx .+0x20
	bgt .-0x20
