/** A token as the API describes it (never its secret, shown once at creation). */
export interface TokenSummary {
  id: string;
  label: string;
  scope: 'read' | 'deploy' | 'full';
  user_id: string;
  user_name?: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  state: 'valid' | 'expired' | 'revoked';
}
