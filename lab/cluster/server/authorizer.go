package main

// The authorizer: what each caller may do at the frontend. Everything not allowed here is refused
// (PermissionDenied with a reason naming the caller's roles and the call).
//
//   no token           health check and GetSystemInfo only
//   viewer             every read-only API (describe, list, count, history, query, task queues, schedules ...)
//   starter            start an agentRun whose workflow id is `<tenant>:...` (a start that makes one new run and
//                      touches no running one: starts.go); send updates and queries to, and describe and read the
//                      history of, its own tenant's runs
//   approver           the `decideApproval` update on its own tenant's runs (and their reads)
//   operator           the `resolveCall` and `requestCancel` updates and RequestCancelWorkflowExecution on its own
//                      tenant's runs (and their reads)
//   worker:<queue>     poll <queue> (and the sticky queues of its workers) and complete the tasks it was given;
//                      start and update the tenant quota workflows (`ledgerloop-quota:*`) on <queue>
//   admin              everything: terminate, reset, signal, signal-with-start, delete, schedules, batches, any
//                      start option, the quota workflows, namespaces, search attributes, the operator and admin
//                      services
//
// A run's tenant is the part of its workflow id before the first `:`. Tenant names that could forge another's
// prefix (anything outside [A-Za-z0-9_.@-], or starting with `ledgerloop-`) get no tenant rights at all.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
)

const (
	roleAdmin    = "admin"
	roleViewer   = "viewer"
	roleStarter  = "starter"
	roleApprover = "approver"
	roleOperator = "operator"
	// A worker role names its task queue: `worker:ledgerloop`.
	roleWorkerPrefix = "worker:"

	runWorkflowType   = "agentRun"
	quotaWorkflowType = "tenantQuota"
	quotaIDPrefix     = "ledgerloop-quota:"
	// The search attribute a run's tenant is listed under (src/domain/search-attributes.ts).
	tenantSearchAttribute = "LedgerloopTenant"
)

var (
	tenantPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}$`)
	approverUpdates = []string{"decideApproval"}
	operatorUpdates = []string{"resolveCall", "requestCancel"}
)

// Reads a tenant role may make of its own tenant's runs.
var tenantReads = []string{
	"DescribeWorkflowExecution",
	"GetWorkflowExecutionHistory",
	"GetWorkflowExecutionHistoryReverse",
	"QueryWorkflow",
	"PollWorkflowExecutionUpdate",
}

// What a worker does with the tasks it polled (each call carries the task token it was given) and about itself.
var workerTaskCalls = []string{
	"RespondWorkflowTaskCompleted",
	"RespondWorkflowTaskFailed",
	"RespondActivityTaskCompleted",
	"RespondActivityTaskFailed",
	"RespondActivityTaskCanceled",
	"RecordActivityTaskHeartbeat",
	"RespondQueryTaskCompleted",
	"RespondNexusTaskCompleted",
	"RespondNexusTaskFailed",
	"ResetStickyTaskQueue",
	"ShutdownWorker",
	"RecordWorkerHeartbeat",
	"DescribeNamespace",
	// The pages of a task's history the poll response did not carry.
	"GetWorkflowExecutionHistory",
}

var workerPolls = []string{"PollWorkflowTaskQueue", "PollActivityTaskQueue", "PollNexusTaskQueue"}

// What a worker may do to a quota workflow besides starting it.
var workerQuotaCalls = []string{"UpdateWorkflowExecution", "PollWorkflowExecutionUpdate", "DescribeWorkflowExecution", "QueryWorkflow"}

type roles struct {
	admin, viewer, starter, approver, operator bool
	queues                                     []string
	// tenant is empty when the caller has no valid tenant: then no tenant role counts.
	tenant string
}

func rolesOf(c *caller) roles {
	var r roles
	for _, role := range c.Roles {
		switch {
		case role == roleAdmin:
			r.admin = true
		case role == roleViewer:
			r.viewer = true
		case role == roleStarter:
			r.starter = true
		case role == roleApprover:
			r.approver = true
		case role == roleOperator:
			r.operator = true
		case strings.HasPrefix(role, roleWorkerPrefix) && len(role) > len(roleWorkerPrefix):
			r.queues = append(r.queues, strings.TrimPrefix(role, roleWorkerPrefix))
		}
	}
	if validTenant(c.Tenant) {
		r.tenant = c.Tenant
	}
	return r
}

// validTenant: a tenant whose `<tenant>:` prefix no other tenant's id can carry, and that is no system prefix.
func validTenant(t string) bool {
	return tenantPattern.MatchString(t) && !strings.HasPrefix(strings.ToLower(t), "ledgerloop-")
}

func (r roles) names() string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{r.admin, roleAdmin}, {r.viewer, roleViewer}, {r.starter, roleStarter}, {r.approver, roleApprover}, {r.operator, roleOperator}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	for _, q := range r.queues {
		out = append(out, roleWorkerPrefix+q)
	}
	if len(out) == 0 {
		return "no role"
	}
	return strings.Join(out, ", ")
}

type ledgerloopAuthorizer struct {
	namespace string
}

func newAuthorizer(namespace string) *ledgerloopAuthorizer {
	return &ledgerloopAuthorizer{namespace: namespace}
}

func allow(c *caller) authorization.Result {
	r := authorization.Result{Decision: authorization.DecisionAllow}
	if c != nil && c.Principal != "" {
		r.Principal = &commonpb.Principal{Type: authType, Name: c.Principal}
	}
	return r
}

func deny(reason string) authorization.Result {
	return authorization.Result{Decision: authorization.DecisionDeny, Reason: reason}
}

func (a *ledgerloopAuthorizer) Authorize(_ context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	if authorization.IsHealthCheckAPI(target.APIName) {
		return allow(nil), nil
	}
	if claims == nil {
		return deny("no credential: without a token only the health check and system info answer"), nil
	}
	// The server's own services, through the internal frontend (its claim mapper is the server's, not ours).
	if claims.AuthType == authorization.InternalPrincipalType && claims.System == authorization.RoleAdmin {
		return allow(nil), nil
	}
	c, ok := claims.Extensions.(*caller)
	if !ok || claims.AuthType != authType {
		return deny("unknown credential"), nil
	}
	if ok, why := a.decide(c, rolesOf(c), target); !ok {
		who := c.Principal
		if who == "" {
			who = "a caller without a token"
		}
		return deny(fmt.Sprintf("%s (%s%s) may not %s", who, rolesOf(c).names(), tenantNote(c), why)), nil
	}
	return allow(c), nil
}

func tenantNote(c *caller) string {
	if c.Tenant == "" {
		return ""
	}
	if !validTenant(c.Tenant) {
		return "; tenant name not usable in workflow ids"
	}
	return "; tenant " + c.Tenant
}

// decide returns whether `c` may make the call, or what was asked for (the end of the denial's sentence).
func (a *ledgerloopAuthorizer) decide(c *caller, r roles, target *authorization.CallTarget) (bool, string) {
	method := api.MethodName(target.APIName)
	what := describeCall(method, target.Request)
	if r.admin {
		return true, ""
	}
	service := api.ServiceName(target.APIName)
	if service != api.WorkflowServicePrefix && service != api.OperatorServicePrefix {
		return false, what + " (only an admin may call " + strings.Trim(service, "/") + ")"
	}
	if target.Namespace != "" && target.Namespace != a.namespace {
		return false, what + " in namespace " + target.Namespace
	}
	if r.viewer && api.GetMethodMetadata(target.APIName).Access == api.AccessReadOnly {
		return true, ""
	}
	if service != api.WorkflowServicePrefix {
		return false, what
	}
	if method == "ExecuteMultiOperation" {
		return a.decideMulti(c, r, target)
	}
	// A start, whoever makes it: the one run it asks for and nothing else (starts.go).
	if method == "StartWorkflowExecution" {
		s, ok := target.Request.(*workflowservice.StartWorkflowExecutionRequest)
		if !ok || s == nil {
			return false, what + " (a request this authorizer cannot read)"
		}
		if why := startRefusal(s); why != "" {
			return false, what + " " + why
		}
	}
	if len(r.queues) > 0 && workerMay(r.queues, method, target.Request) {
		return true, ""
	}
	if r.tenant != "" && (r.starter || r.approver || r.operator) && tenantMay(r, method, target.Request) {
		return true, ""
	}
	return false, what
}

// decideMulti: the one shape the server runs, an update-with-start (a start, then an update of the same workflow
// id), allowed when its start and its update each are. Any other list is refused here, whatever the server would do.
func (a *ledgerloopAuthorizer) decideMulti(c *caller, r roles, target *authorization.CallTarget) (bool, string) {
	req, ok := target.Request.(*workflowservice.ExecuteMultiOperationRequest)
	ops := req.GetOperations()
	if !ok || len(ops) != 2 || ops[0].GetStartWorkflow() == nil || ops[1].GetUpdateWorkflow() == nil {
		return false, "ExecuteMultiOperation (only a start followed by an update of the same workflow)"
	}
	start, upd := ops[0].GetStartWorkflow(), ops[1].GetUpdateWorkflow()
	if start.GetWorkflowId() != upd.GetWorkflowExecution().GetWorkflowId() {
		return false, fmt.Sprintf("ExecuteMultiOperation (a start of %s with an update of %s)", start.GetWorkflowId(), upd.GetWorkflowExecution().GetWorkflowId())
	}
	namespace := target.Namespace
	if namespace == "" {
		namespace = req.GetNamespace()
	}
	for _, sub := range []*authorization.CallTarget{
		{APIName: api.WorkflowServicePrefix + "StartWorkflowExecution", Namespace: namespace, Request: start},
		{APIName: api.WorkflowServicePrefix + "UpdateWorkflowExecution", Namespace: namespace, Request: upd},
	} {
		if ok, why := a.decide(c, r, sub); !ok {
			return false, "ExecuteMultiOperation: " + why
		}
	}
	return true, ""
}

// workflowIDOf: the workflow a request names, for the APIs whose decision depends on it.
func workflowIDOf(req any) (string, bool) {
	switch r := req.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		return r.GetWorkflowId(), true
	case *workflowservice.UpdateWorkflowExecutionRequest:
		return r.GetWorkflowExecution().GetWorkflowId(), true
	case *workflowservice.PollWorkflowExecutionUpdateRequest:
		return r.GetUpdateRef().GetWorkflowExecution().GetWorkflowId(), true
	case *workflowservice.QueryWorkflowRequest:
		return r.GetExecution().GetWorkflowId(), true
	case *workflowservice.DescribeWorkflowExecutionRequest:
		return r.GetExecution().GetWorkflowId(), true
	case *workflowservice.GetWorkflowExecutionHistoryRequest:
		return r.GetExecution().GetWorkflowId(), true
	case *workflowservice.GetWorkflowExecutionHistoryReverseRequest:
		return r.GetExecution().GetWorkflowId(), true
	case *workflowservice.RequestCancelWorkflowExecutionRequest:
		return r.GetWorkflowExecution().GetWorkflowId(), true
	case *workflowservice.TerminateWorkflowExecutionRequest:
		return r.GetWorkflowExecution().GetWorkflowId(), true
	case *workflowservice.SignalWorkflowExecutionRequest:
		return r.GetWorkflowExecution().GetWorkflowId(), true
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		return r.GetWorkflowId(), true
	case *workflowservice.ResetWorkflowExecutionRequest:
		return r.GetWorkflowExecution().GetWorkflowId(), true
	case *workflowservice.DeleteWorkflowExecutionRequest:
		return r.GetWorkflowExecution().GetWorkflowId(), true
	}
	return "", false
}

func updateNameOf(req any) string {
	if r, ok := req.(*workflowservice.UpdateWorkflowExecutionRequest); ok {
		return r.GetRequest().GetInput().GetName()
	}
	return ""
}

// describeCall names a call for a denial: the API, the update name and the workflow id where there are.
func describeCall(method string, req any) string {
	out := method
	if name := updateNameOf(req); name != "" {
		out += " " + name
	}
	if id, ok := workflowIDOf(req); ok {
		out += " on " + id
	}
	if tq := taskQueueOf(req); tq != nil {
		out += " on task queue " + queueName(tq)
	}
	return out
}

func taskQueueOf(req any) *taskqueuepb.TaskQueue {
	switch r := req.(type) {
	case *workflowservice.PollWorkflowTaskQueueRequest:
		return r.GetTaskQueue()
	case *workflowservice.PollActivityTaskQueueRequest:
		return r.GetTaskQueue()
	case *workflowservice.PollNexusTaskQueueRequest:
		return r.GetTaskQueue()
	}
	return nil
}

// queueName: the normal queue a poll is for (a sticky queue belongs to its worker's normal queue).
func queueName(tq *taskqueuepb.TaskQueue) string {
	if tq.GetKind() == enumspb.TASK_QUEUE_KIND_STICKY {
		return tq.GetNormalName()
	}
	return tq.GetName()
}

func workerMay(queues []string, method string, req any) bool {
	switch {
	case slices.Contains(workerPolls, method):
		tq := taskQueueOf(req)
		return tq != nil && queueName(tq) != "" && slices.Contains(queues, queueName(tq))
	case slices.Contains(workerTaskCalls, method):
		return true
	case method == "StartWorkflowExecution":
		s, ok := req.(*workflowservice.StartWorkflowExecutionRequest)
		return ok && strings.HasPrefix(s.GetWorkflowId(), quotaIDPrefix) &&
			s.GetWorkflowType().GetName() == quotaWorkflowType &&
			s.GetTaskQueue().GetKind() != enumspb.TASK_QUEUE_KIND_STICKY &&
			slices.Contains(queues, s.GetTaskQueue().GetName())
	case slices.Contains(workerQuotaCalls, method):
		id, ok := workflowIDOf(req)
		return ok && strings.HasPrefix(id, quotaIDPrefix)
	}
	return false
}

func ownRun(tenant, id string) bool {
	return strings.HasPrefix(id, tenant+":") && len(id) > len(tenant)+1
}

func tenantMay(r roles, method string, req any) bool {
	if method == "DescribeNamespace" {
		return true
	}
	id, named := workflowIDOf(req)
	if !named || !ownRun(r.tenant, id) {
		return false
	}
	switch {
	case slices.Contains(tenantReads, method):
		return true
	case method == "StartWorkflowExecution":
		s, ok := req.(*workflowservice.StartWorkflowExecutionRequest)
		return r.starter && ok && startAllowed(r.tenant, s)
	case method == "UpdateWorkflowExecution":
		name := updateNameOf(req)
		return r.starter || (r.approver && slices.Contains(approverUpdates, name)) ||
			(r.operator && slices.Contains(operatorUpdates, name))
	case method == "RequestCancelWorkflowExecution":
		return r.operator
	}
	return false
}

// startAllowed: an agent run, listed under the caller's own tenant when it names one (the start's options are
// startRefusal's, for every role).
func startAllowed(tenant string, s *workflowservice.StartWorkflowExecutionRequest) bool {
	if s.GetWorkflowType().GetName() != runWorkflowType {
		return false
	}
	if p, listed := s.GetSearchAttributes().GetIndexedFields()[tenantSearchAttribute]; listed {
		var v string
		if json.Unmarshal(p.GetData(), &v) != nil || v != tenant {
			return false
		}
	}
	return true
}
