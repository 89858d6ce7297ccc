; id: PY044
; title: Network run with autograd recording where no gradient is wanted (a target network, action selection)
; level: 4
; severity: low
; needs: torch
; status: statically_confirmed
; when: grad-free-forward, not-in-no-grad, not-demo-main, file-has /torch/
; rationale: Outside torch.no_grad() every forward records an autograd graph and keeps its activations until the output is dropped: a target network's forward for the TD target (only .detach()ed afterwards, or, not detached, backpropagated through for nothing), or the actor's forward when an agent picks an action and returns it as numpy. That bookkeeping is paid on every update or environment step; for the small networks of reinforcement learning it is a large share of the forward.
; fix: compute it under torch.no_grad() (or torch.inference_mode()), or decorate the function with @torch.no_grad()
; quiet: under no_grad/inference_mode (a with block or a decorator); a target network frozen by the code (requires_grad = False); an action-selection function that runs a backward pass or returns no host value (its output may feed a loss); a network that is not a target one in a training step; one finding per function
; bad:
;| import torch
;| class Agent:
;|     def learn(self, s, a, r, s2, done):
;|         target = r + 0.99 * (1 - done) * self.critic_target(s2, self.actor_target(s2))
;|         loss = ((self.critic(s, a) - target.detach()) ** 2).mean()
;|         self.opt.zero_grad()
;|         loss.backward()
;|         self.opt.step()
; good:
;| import torch
;| class Agent:
;|     def learn(self, s, a, r, s2, done):
;|         with torch.no_grad():
;|             target = r + 0.99 * (1 - done) * self.critic_target(s2, self.actor_target(s2))
;|         loss = ((self.critic(s, a) - target) ** 2).mean()
;|         self.opt.zero_grad()
;|         loss.backward()
;|         self.opt.step()
((call function: (attribute object: (identifier) @o attribute: (identifier) @n)) @finding
 (#eq? @o "self") (#match? @n "[Tt]arget|[Aa]ctor|[Cc]ritic|[Pp]olicy|[Nn]et|[Mm]odel|^[qQ]|^pi$|^mu$|[Vv]alue|dqn|local"))
((call function: (attribute object: (attribute object: (identifier) @o attribute: (identifier) @n))) @finding
 (#eq? @o "self") (#match? @n "[Tt]arget|[Aa]ctor|[Cc]ritic|[Pp]olicy|[Nn]et|[Mm]odel|^[qQ]|^pi$|^mu$|[Vv]alue|dqn|local"))
((call function: (identifier) @n) @finding
 (#match? @n "[Tt]arget|^([Aa]ctor|[Cc]ritic|[Pp]olicy|[Nn]et|[Mm]odel|[qQ]|pi|mu|dqn)"))
