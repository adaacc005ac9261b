@ Instructions used by sim/tests/arm_mul.rs (one per line, each at its own address).
@ Assembled with: arm-none-eabi-as -mcpu=xscale (ARMv5TE + XScale); encodings read back with
@ arm-none-eabi-objdump -d. Lines with .inst are encodings gas refuses (UNPREDICTABLE forms),
@ hand-derived from the valid form named in the comment.
	.arm
	.syntax unified
	mul r0, r1, r2
	muls r0, r1, r2
	mla r0, r1, r2, r3
	mlas r0, r1, r2, r3
	mul r1, r1, r2
	.inst 0xe00f0291 @ mul pc, r1, r2 (gas refuses; mul r0, r1, r2 = 0xe0000291)
	umull r0, r1, r2, r3
	smull r0, r1, r2, r3
	smulls r0, r1, r2, r3
	umulls r0, r1, r2, r3
	umlal r0, r1, r2, r3
	smlal r0, r1, r2, r3
	.inst 0xe0800392 @ umull r0, r0, r2, r3 (gas refuses RdHi = RdLo; umull r0, r1, r2, r3 = 0xe0810392)
	smlabb r0, r1, r2, r3
	smlabt r0, r1, r2, r3
	smlatb r0, r1, r2, r3
	smlatt r0, r1, r2, r3
	smulbb r0, r1, r2
	smultb r0, r1, r2
	smulbt r0, r1, r2
	smulwb r0, r1, r2
	smulwt r0, r1, r2
	smlawb r0, r1, r2, r3
	smlawt r0, r1, r2, r3
	smlalbb r0, r1, r2, r3
	smlaltt r0, r1, r2, r3
	qadd r0, r1, r2
	qsub r0, r1, r2
	qdadd r0, r1, r2
	qdsub r0, r1, r2
	clz r0, r1
	.inst 0xe16fff11 @ clz pc, r1 (gas refuses; clz r0, r1 = 0xe16f0f11)
	mia acc0, r1, r2
	mra r3, r4, acc0
	mar acc0, r5, r6
	mar acc0, r7, r7
	miaph acc0, r1, r2
	miabb acc0, r1, r2
	miabt acc0, r1, r2
	miatb acc0, r1, r2
	miatt acc0, r1, r2
	mar acc0, r8, r9
	mcrr p1, 0, r0, r1, c0
	mrrc p0, 1, r0, r1, c0
	mcr p0, 0, r0, c0, c0, 0
	mrc p0, 1, r0, c0, c0, 0
