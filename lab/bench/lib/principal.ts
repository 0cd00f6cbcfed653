/** Who every bench run acts for: one tenant, one principal (the runs of every kind share them). */
export const TENANT = 'acme';
export const PRINCIPAL = 'user:bench';
